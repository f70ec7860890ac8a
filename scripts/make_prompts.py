"""Write src/specbridge/data/prompts/train_extra.jsonl: ~2500 diverse, templated user prompts for EAGLE-3 training data.

Why: EAGLE-3 drafters are trained by self-distillation: the target model (SmolLM2-135M-Instruct) regenerates
the response to every training prompt and the drafter learns to predict the target's own tokens and hidden
states. Only the prompts are needed, never reference answers, but they must be many and varied (chat,
explanations, facts, arithmetic, code in several languages, summaries, creative writing, rewriting, emails,
reasoning, ...) or the drafter only learns the few response shapes that 304 prompts in train.jsonl produce.
The validation prompts (src/specbridge/data/prompts/val.jsonl) are the acceptance benchmark, so they are kept out: no
prompt here equals one in train.jsonl or val.jsonl (case/whitespace-insensitive), none repeats, and any
prompt whose lowercase word set has Jaccard similarity >= 0.8 with a val prompt is skipped.

The subject word lists are data, `make_prompts_words.json` beside this script; the templates below combine them.
Stdlib only and deterministic (seeded random; same file every run; tests/test_one_place.py reruns it):

    python3 scripts/make_prompts.py                 # writes src/specbridge/data/prompts/train_extra.jsonl
    python3 scripts/make_prompts.py --target 3000 --out /tmp/p.jsonl
"""

from __future__ import annotations

import argparse
import collections
import itertools
import json
import random
import re
import string
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
PROMPTS = ROOT / "src" / "specbridge" / "data" / "prompts"
JACCARD_MAX = 0.8  # skip a prompt whose word set is this similar (or more) to any val prompt
# share of the output per category (templates within a category share its quota round-robin)
SHARE = {
    "code": 14,
    "math": 11,
    "factual": 11,
    "explain": 10,
    "creative": 11,
    "chat": 10,
    "howto": 9,
    "reasoning": 7,
    "list": 7,
    "summary": 5,
    "rewrite": 3,
    "email": 2,
}

# ---------------------------------------------------------------------------------------------------------
# subject lists: data, in make_prompts_words.json beside this script (name -> list; UNITS rows are
# [from, to, low, high, step], pairs such as CONCEPT_PAIRS and HOW_MANY are two-item lists)
# ---------------------------------------------------------------------------------------------------------

W = SimpleNamespace(**json.loads(Path(__file__).with_name("make_prompts_words.json").read_text(encoding="utf-8")))

# ---------------------------------------------------------------------------------------------------------
# templates: each is (category, function(rng) -> list of candidate prompts)
# ---------------------------------------------------------------------------------------------------------

TEMPLATES: list[tuple[str, object]] = []


def cross(category: str, pattern: str, **slots: list) -> None:
    """A template: every combination of the slot lists, formatted into the pattern."""
    names = [f for _, f, _, _ in string.Formatter().parse(pattern) if f]
    assert sorted(set(names)) == sorted(slots), (pattern, names, list(slots))
    keys = list(slots)

    def gen(rng: random.Random) -> list[str]:
        return [pattern.format(**dict(zip(keys, combo))) for combo in itertools.product(*(slots[k] for k in keys))]

    TEMPLATES.append((category, gen))


def fixed(category: str, prompts: list[str]) -> None:
    """A hand-written list (counted as one template)."""
    TEMPLATES.append((category, lambda rng, p=list(prompts): p))


def numeric(category: str, n: int = 200):
    """A template whose slots are random numbers: the decorated function draws one prompt per call."""

    def deco(fn):
        TEMPLATES.append((category, lambda rng: [fn(rng) for _ in range(n)]))
        return fn

    return deco


def cap(s: str) -> str:
    return s[0].upper() + s[1:]


# --- explanations of concepts, for different audiences ----------------------------------------------------
cross("explain", "Explain {t} to {a}.", t=W.SCIENCE + W.TECH, a=W.AUDIENCES)
cross("explain", "Can you explain {t} in simple terms?", t=W.SCIENCE + W.TECH + W.FINANCE)
cross("explain", "How does {t} work?", t=W.HOW_THINGS)
cross("explain", "Give me a beginner's introduction to {t}. Why should I care?", t=W.TECH + W.FINANCE)
cross("explain", "In two or three sentences, tell me about {t}.", t=W.SCIENCE + W.TECH)
cross("explain", "What's the difference between {p}?", p=[f"{a} and {b}" for a, b in W.CONCEPT_PAIRS])
cross("explain", "Explain {t} like I'm new to personal finance.", t=W.FINANCE)
cross("explain", "What are the health benefits of {h}?", h=W.HEALTH)
cross("explain", "Why was {h} so important in history?", h=W.HISTORY)
cross("explain", "What were the main causes of {e}?", e=W.HISTORY_EVENTS)
cross("explain", "Give me a quick overview of {h} for a history class.", h=W.HISTORY)
cross("explain", "Explain how {t} affects everyday life.", t=W.TECH + W.FINANCE)
cross(
    "explain",
    "I'm {a}. Can you explain {t} to me?",
    a=["a nurse", "a chef", "a lawyer", "a musician", "a truck driver", "a high school student", "an accountant"],
    t=W.TECH + W.FINANCE,
)

# --- factual questions ------------------------------------------------------------------------------------
cross("factual", "What is the capital of {c}?", c=W.COUNTRIES)
cross("factual", "What language is mainly spoken in {c}?", c=W.COUNTRIES)
cross("factual", "What currency is used in {c}?", c=W.COUNTRIES)
cross("factual", "Which continent is {c} in?", c=W.COUNTRIES)
cross("factual", "Where is {l} located?", l=W.LANDMARKS)
cross("factual", "Tell me a little about {l}.", l=W.LANDMARKS)
cross("factual", "Who invented {i}, and when?", i=W.INVENTIONS)
cross("factual", "Who was {p}?", p=W.PEOPLE)
cross("factual", "What is {p} best known for?", p=W.PEOPLE)
cross("factual", "What do {a} eat?", a=W.ANIMALS)
cross("factual", "Where do {a} live in the wild?", a=W.ANIMALS)
cross("factual", "How long do {a} usually live?", a=W.ANIMALS)
cross("factual", "What is {c} famous for?", c=W.CITIES)
cross("factual", "What does the word '{w}' mean?", w=W.WORDS)
cross("factual", "Define '{w}' and use it in a sentence.", w=W.WORDS)
cross("factual", "What is a synonym and an antonym for '{w}'?", w=W.WORDS)
fixed(
    "factual",
    [
        "What is the boiling point of water at sea level?",
        "How far is the Moon from the Earth?",
        "What is the longest river in Africa?",
        "How many bones are in the adult human body?",
        "What is the chemical symbol for gold?",
        "Which planet is known as the Red Planet?",
        "What is the smallest country in the world?",
        "How many continents are there?",
        "What is the hardest natural substance?",
        "What gas do plants absorb from the air?",
        "Who was the first person to walk on the Moon?",
        "What is the largest desert in the world?",
        "How many players are on a soccer team on the field?",
        "What is the freezing point of water in Fahrenheit?",
        "What is the most spoken language in the world?",
        "How many strings does a standard guitar have?",
        "What is the largest organ in the human body?",
        "In what year did the Titanic sink?",
        "What is the main ingredient in guacamole?",
        "How many hearts does an octopus have?",
        "What is the deepest point in the ocean?",
        "Which element has the atomic number 1?",
        "How many time zones does Russia have?",
        "What is the fastest land animal?",
        "How long does it take light from the Sun to reach Earth?",
        "What is the official language of Brazil?",
    ],
)

# --- math: arithmetic, percentages, geometry, conversions, word problems ------------------------------------


@numeric("math")
def _mul(r):
    return f"What is {r.randint(6, 99)} times {r.randint(3, 49)}?"


@numeric("math")
def _add(r):
    return r.choice(["What is {a} plus {b}?", "Add {a} and {b}.", "What do you get if you add {a} to {b}?"]).format(
        a=r.randint(12, 9999), b=r.randint(12, 9999)
    )


@numeric("math")
def _sub(r):
    a = r.randint(50, 5000)
    return f"Calculate {a} minus {r.randint(1, a - 1)}."


@numeric("math")
def _div(r):
    b = r.randint(2, 25)
    return f"What is {b * r.randint(2, 60)} divided by {b}?"


@numeric("math")
def _pct(r):
    return f"What is {r.choice([5, 10, 12, 15, 20, 25, 30, 40, 50, 75])}% of {r.randint(2, 80) * 10}?"


@numeric("math")
def _sqrt(r):
    return r.choice(["What is the square root of {n}?", "What is {m} squared?"]).format(n=r.randint(2, 30) ** 2, m=r.randint(11, 40))


@numeric("math")
def _convert(r):
    f, t, lo, hi, step = r.choice(W.UNITS)
    return r.choice(["Convert {v} {f} to {t}.", "How many {t} is {v} {f}?"]).format(v=r.randrange(lo, hi + 1, step), f=f, t=t)


@numeric("math")
def _how_many(r):
    small, big = r.choice(W.HOW_MANY)
    n = r.randint(2, 12)
    return f"How many {small} are in {n} {big}s?" if r.random() < 0.7 else f"How many {small} are in a {big}?"


@numeric("math")
def _rect(r):
    a, b = r.randint(2, 30), r.randint(2, 30)
    return r.choice(
        [
            f"What is the area of a rectangle that is {a} meters by {b} meters?",
            f"A room is {a} feet long and {b} feet wide. How many square feet is the floor?",
            f"What is the perimeter of a rectangle with sides {a} cm and {b} cm?",
            f"What is the area of a triangle with a base of {a} and a height of {b}?",
            f"What is the circumference of a circle with a diameter of {a} inches?",
            f"What is the volume of a box that is {a} cm by {b} cm by {r.randint(2, 20)} cm?",
        ]
    )


@numeric("math")
def _have_more(r):
    n1, n2 = r.sample(W.NAMES, 2)
    a, b = r.randint(3, 60), r.randint(2, 40)
    item = r.choice(W.ITEMS)
    return r.choice(
        [
            f"{n1} has {a} {item} and buys {b} more. How many {item} does {n1} have now?",
            f"{n1} has {a + b} {item} and gives {b} to {n2}. How many are left?",
            f"{n1} has {a} {item} and {n2} has {b}. How many do they have together?",
            f"{n1} has {a} {item}, which is {b} more than {n2}. How many does {n2} have?",
        ]
    )


@numeric("math")
def _pages(r):
    n = r.choice(W.NAMES)
    p = r.randint(8, 60)
    return f"{n} reads {p} pages a day. How many days will it take to finish a {p * r.randint(4, 20) + r.randint(0, p - 1)}-page book?"


@numeric("math")
def _sale(r):
    return r.choice(
        [
            "A jacket costs ${p} and is on sale for {d}% off. What is the sale price?",
            "A meal costs ${p}. How much is a {t}% tip?",
            "The price of a bike went from ${p} to ${q}. What was the percentage increase?",
        ]
    ).format(p=r.randint(10, 300), d=r.choice([10, 15, 20, 25, 30, 40, 50]), t=r.choice([10, 15, 18, 20]), q=r.randint(310, 450))


@numeric("math")
def _speed(r):
    s, h = r.randint(30, 120), r.choice([1, 2, 3, 4, 5, 1.5, 2.5])
    return r.choice(
        [
            f"If a car travels at {s} km/h for {h} hours, how far does it go?",
            f"A train covers {s * 3} km in 3 hours. What is its average speed?",
            f"How long does it take to drive {s * 2} miles at {s} miles per hour?",
            f"A cyclist rides at {r.randint(12, 30)} km/h. How far will she get in {h} hours?",
        ]
    )


@numeric("math")
def _recipe(r):
    a, b = r.randint(1, 4), r.choice([2, 4, 6])
    return f"A recipe needs {a} cups of flour for {b} servings. How much flour do I need for {r.choice([3, 5, 8, 9, 10, 12])} servings?"


@numeric("math")
def _wage(r):
    return r.choice(
        [
            "{n} earns ${w} per hour and works {h} hours a week. How much does {n} earn in a week?",
            "If I save ${s} every month, how much will I have after {m} months?",
            "What is the simple interest on ${p} at {i}% per year for {y} years?",
            "I have a budget of ${b} for {k} days. How much can I spend per day?",
        ]
    ).format(
        n=r.choice(W.NAMES),
        w=r.randint(12, 45),
        h=r.randint(10, 45),
        s=r.randint(2, 50) * 10,
        m=r.randint(3, 36),
        p=r.randint(5, 100) * 100,
        i=r.randint(2, 9),
        y=r.randint(2, 10),
        b=r.randint(10, 90) * 10,
        k=r.randint(3, 14),
    )


@numeric("math")
def _avg(r):
    nums = [r.randint(1, 100) for _ in range(r.randint(3, 6))]
    s = ", ".join(map(str, nums[:-1])) + f" and {nums[-1]}"
    return r.choice([f"What is the average of {s}?", f"Find the median of {s}.", f"What is the sum of {s}?"])


@numeric("math")
def _solve(r):
    a, x, b = r.randint(2, 12), r.randint(-10, 20), r.randint(1, 30)
    return r.choice([f"Solve for x: {a}x + {b} = {a * x + b}.", f"If {a}x - {b} = {a * x - b}, what is x?"])


@numeric("math")
def _prime(r):
    n = r.randint(20, 400)
    return r.choice([f"Is {n} a prime number?", f"What are the factors of {n}?", f"Is {n} divisible by 3? How can you tell?"])


@numeric("math")
def _frac(r):
    a, b = r.randint(1, 5), r.randint(2, 9)
    c, d = r.randint(1, 5), r.randint(2, 9)
    op = r.choice(["plus", "minus", "times"])
    return r.choice([f"What is {a}/{b} {op} {c}/{d}?", f"Simplify the fraction {a * c * 2}/{b * c * 2}.", f"Convert {a}/{b} to a decimal."])


@numeric("math")
def _round(r):
    x = round(r.uniform(1, 5000), r.choice([2, 3]))
    return f"Round {x} to the nearest {r.choice(W.ROUND_PLACES)}."


@numeric("math")
def _pizza(r):
    n, k = r.randint(6, 24), r.randint(2, 7)
    return r.choice(
        [
            f"A pizza is cut into {n} slices and shared equally by {k} people. How many slices does each get, and how many are left over?",
            f"There are {n * k + r.randint(0, k - 1)} students and each bus holds {n + 20}. How many buses are needed?",
            f"If today is {r.choice(W.WEEKDAYS)}, what day of the week will it be in {r.randint(3, 100)} days?",
        ]
    )


# --- code -------------------------------------------------------------------------------------------------
cross("code", "Write a {l} function that {t}.", l=W.CODE_LANGS, t=W.CODE_TASKS)
cross("code", "Write a C function that {t}.", t=W.C_TASKS)
cross("code", "How do I {t} in Python?", t=W.PY_HOWTOS)
cross("code", "How do I {t} in JavaScript?", t=W.JS_HOWTOS)
cross("code", "Write a SQL query that {t}.", t=W.SQL_TASKS)
cross("code", "Write a bash command that {t}.", t=W.BASH_TASKS)
cross("code", "What does the `{c}` command do? Give an example.", c=W.LINUX_CMDS)
cross("code", "Explain {c} with a short code example.", c=W.CODE_CONCEPTS)
cross("code", "Explain the difference between {p}.", p=W.CODE_PAIRS)
cross("code", "Explain what this {s}", s=[f"{lang} code does:\n{code}" for lang, code in W.SNIPPETS])
cross("code", "Find the bug in this Python code:\n{b}", b=W.BUGGY)
cross("code", "Convert this Python code to JavaScript:\n{c}", c=W.PY_TO_JS)
cross("code", "Write a {l} class that represents {e}.", l=["Python", "Java", "TypeScript", "C#"], e=W.CLASS_ENTITIES)
cross("code", "Write a regular expression that matches {t}.", t=W.REGEX_TARGETS)
cross("code", "Write Python unit tests for a function that {t}.", t=W.CODE_TASKS)
cross(
    "code",
    "Write a short {l} program that asks the user for {x}.",
    l=["Python", "Java", "C", "JavaScript (Node.js)"],
    x=[
        "their name and prints a greeting",
        "two numbers and prints their sum",
        "a temperature in Celsius and prints it in Fahrenheit",
        "a word and prints it backwards",
        "their age and says whether they can vote",
        "a number and prints whether it is odd or even",
    ],
)

# --- how-to -----------------------------------------------------------------------------------------------
cross("howto", "How do I {t}?", t=W.HOWTO_TASKS)
cross("howto", "What's the easiest way to {t}?", t=W.HOWTO_TASKS)
cross("howto", "Give me step-by-step instructions for {t}.", t=W.GERUND_TASKS)
cross("howto", "How do I get started with {h}?", h=W.HOBBIES)
cross("howto", "What equipment do I need to start {h}, and what does it cost roughly?", h=W.HOBBIES)
cross("howto", "Give me a simple recipe for {d}.", d=W.DISHES)
cross("howto", "What can I cook with {i}?", i=[f"{a}, {b} and {c}" for a, b, c in itertools.combinations(W.INGREDIENTS, 3)])
cross("howto", "What's the best way to store {f} at home?", f=W.FOODS)
cross("howto", "How can I make {d} healthier?", d=W.DISHES)
cross("howto", "I'm a beginner at {h}. What should I practice in my first month?", h=W.HOBBIES)

# --- chat / advice ----------------------------------------------------------------------------------------
cross("chat", "I {s}. What should I do?", s=W.SITUATIONS)
cross("chat", "Can you recommend {m} for someone who likes {g}?", m=W.MEDIA, g=W.GENRES)
cross("chat", "Give me {n} ideas for {t}.", n=["three", "five", "a few"], t=W.IDEA_TARGETS)
cross("chat", "What should I pack for {t}?", t=W.TRIPS)
cross("chat", "My friend {s}. How can I support them?", s=W.FRIEND_SITUATIONS)
cross("chat", "Any tips for {g}?", g=W.LIFE_GOALS)
cross("chat", "Tell me a joke about {t}.", t=W.JOKE_TOPICS)
cross("chat", "What's a nice way to celebrate {o}?", o=W.OCCASIONS)
cross("chat", "Can you help me plan a {n}-day trip to {c}?", n=["two", "three", "four", "five", "seven"], c=W.CITIES_TRIP)
cross("chat", "I have {t} free this evening. What could I do?", t=["an hour", "two hours", "three hours", "the whole evening"])
cross(
    "chat",
    "What are some good conversation starters for {x}?",
    x=[
        "a networking event",
        "a first date",
        "meeting my partner's parents",
        "a new coworker",
        "a wedding reception",
        "a long car ride",
        "a team video call",
    ],
)
fixed(
    "chat",
    [
        "Hi! What kinds of things can you help me with?",
        "Good morning! Can you give me a fun fact to start my day?",
        "I'm bored. Entertain me for a minute.",
        "What's something interesting I could learn in five minutes?",
        "Can you give me a motivational quote and explain it?",
        "How are you today?",
        "I just finished a really hard week. Say something encouraging.",
        "Let's play a word game. You start.",
        "Can you give me a random would-you-rather question?",
        "What's a good hobby for someone who works from home?",
        "What should I name my new houseplant?",
        "I can't decide what to have for dinner. Help me choose.",
        "Thanks for your help earlier! Can you summarize what we talked about?",
        "Tell me something that will make me smile.",
        "What's a good habit I could start this week?",
        "Give me a fun riddle for my kids.",
    ],
)

# --- creative writing -------------------------------------------------------------------------------------
cross("creative", "Write a short poem about {t}.", t=W.POEM_TOPICS)
cross("creative", "Write a haiku about {t}.", t=W.POEM_TOPICS)
cross("creative", "Write a limerick about {c}.", c=W.CHARACTERS)
cross("creative", "Write a short story about {c} who {p}.", c=W.CHARACTERS, p=W.PLOTS)
cross("creative", "Write the opening paragraph of a {g} novel.", g=W.NOVEL_GENRES)
cross("creative", "Write a letter from {p}.", p=[f"{a} to {b}" for a, b in W.LETTERS])
cross(
    "creative", "Write a short dialogue between {p} about {t}.", p=[f"{a} and {b}" if b else a for a, b in W.DIALOGUES], t=W.DIALOGUE_TOPICS
)
cross("creative", "Come up with a catchy slogan for {b}.", b=W.BUSINESSES)
cross("creative", "Write a product description for {p}.", p=W.PRODUCTS)
cross("creative", "Write a {t} birthday message for {r}.", t=W.TONES, r=W.RELATIONS)
cross("creative", "Write the chorus of a song about {t}.", t=W.POEM_TOPICS)
cross("creative", "Invent a name and a short backstory for {f}.", f=W.FANTASY_THINGS)
cross("creative", "Describe {s} using all five senses.", s=W.SCENES)
cross(
    "creative",
    "Write a thank-you note to {r} for {g}.",
    r=W.RELATIONS,
    g=["a thoughtful gift", "helping me move", "dinner last night", "their advice", "a book recommendation"],
)
cross("creative", "Write a short bedtime story for a child about {a}.", a=W.ANIMALS)
cross(
    "creative",
    "Write an acrostic poem using the word {w}.",
    w=["SPRING", "OCEAN", "FRIEND", "COFFEE", "DREAM", "MUSIC", "HOME", "LIGHT", "BRAVE", "SMILE", "RAIN", "GARDEN"],
)

# --- emails -----------------------------------------------------------------------------------------------
cross("email", "Write a {t} email to {x}.", t=W.EMAIL_TONES, x=W.EMAIL_TARGETS)
cross("email", "Draft a short email to my team announcing {a}.", a=W.ANNOUNCEMENTS)
cross("email", "Write an email politely declining {d}.", d=W.DECLINES)
cross("email", "Help me write a follow-up email after {f}.", f=W.FOLLOWUPS)

# --- reasoning --------------------------------------------------------------------------------------------
fixed("reasoning", W.RIDDLES)
cross("reasoning", "What would happen if {h}?", h=W.HYPOTHETICALS)
cross("reasoning", "Why do {p}?", p=W.WHY_DO)
cross("reasoning", "Why does {p}?", p=W.WHY_DOES)
cross("reasoning", "Is it a good idea to {d}? Think through both sides.", d=W.DECISIONS)
cross("reasoning", "Which one doesn't belong, and why: {s}?", s=W.ODD_ONE_OUT)


@numeric("reasoning")
def _taller(r):
    a, b, c = r.sample(W.NAMES, 3)
    rel = r.choice([("taller", "shortest"), ("older", "youngest"), ("faster", "slowest"), ("heavier", "lightest")])
    return f"{a} is {rel[0]} than {b}, and {b} is {rel[0]} than {c}. Who is the {rel[1]}?"


@numeric("reasoning")
def _sequence(r):
    start, step = r.randint(1, 20), r.randint(2, 9)
    if r.random() < 0.5:
        seq = [start + i * step for i in range(5)]
    else:
        seq = [start * (step // 2 + 1) ** i for i in range(4)]
    return f"What is the next number in the sequence {', '.join(map(str, seq))}?"


@numeric("reasoning")
def _ages(r):
    a, b = r.sample(W.NAMES, 2)
    x, d = r.randint(5, 40), r.randint(2, 15)
    return r.choice(
        [
            f"{a} is {x} years old. {b} is {d} years older than {a}. How old will {b} be in 5 years?",
            f"In {d} years, {a} will be twice as old as {a} is now. How old is {a} now?",
            f"{a} is {x} and {b} is {x + d}. In how many years will their ages add up to {2 * x + d + 2 * d}?",
        ]
    )


# --- lists, comparisons, pros and cons --------------------------------------------------------------------
cross("list", "List {n} {t}.", n=W.LIST_COUNTS, t=W.LIST_THINGS)
cross("list", "Compare {p}.", p=[f"{a} and {b} for {c}" for a, b, c in W.COMPARE_PAIRS])
cross("list", "{p}", p=[f"{cap(a)} or {b}: which is better for {c}?" for a, b, c in W.COMPARE_PAIRS])
cross("list", "What are the pros and cons of {t}?", t=W.PROS_CONS)
cross("list", "Give me a checklist for {c}.", c=W.CHECKLISTS)
cross("list", "What are the most common mistakes people make when {m}?", m=W.MISTAKE_CONTEXTS)
cross(
    "list",
    "Make a table comparing {p}.",
    p=[f"{a} and {b}" for a, b in W.CONCEPT_PAIRS[:20]] + [f"{a} and {b}" for a, b, _ in W.COMPARE_PAIRS],
)
cross("list", "Give me {n} interesting facts about {a}.", n=["two", "four", "five"], a=W.ANIMALS + W.LANDMARKS)

# --- summaries --------------------------------------------------------------------------------------------
for _instr in W.SUMMARY_INSTRUCTIONS:
    cross("summary", _instr.replace("{p}", "{passage}"), passage=W.PASSAGES)
cross("summary", "Summarize the plot of {b}.", b=W.BOOKS)
cross("summary", "Give me a short summary of {b} without spoilers.", b=W.BOOKS)
cross("summary", "Summarize {h} in five sentences.", h=W.HISTORY)

# --- rewriting, grammar, plain English --------------------------------------------------------------------
cross("rewrite", "Fix the grammar in this sentence: {s}", s=W.BAD_GRAMMAR)
cross("rewrite", 'Rewrite this message so it sounds professional: "{s}"', s=W.CASUAL)
cross("rewrite", "Rewrite this in simple English: {s}", s=W.COMPLEX_TEXT)
cross("rewrite", "Make this sentence shorter: {s}", s=W.WORDY)
cross("rewrite", 'Rewrite this so it sounds friendlier: "{s}"', s=W.BLUNT)
cross("rewrite", "Translate this into plain English: {s}", s=W.JARGON)
cross("rewrite", "Paraphrase this sentence in two different ways: {s}", s=W.COMPLEX_TEXT + W.WORDY)
cross(
    "rewrite",
    "Rewrite this sentence in the passive voice: {s}",
    s=[
        "The chef cooked a delicious meal.",
        "The storm destroyed the old bridge.",
        "Our team finished the project early.",
        "The teacher graded all the exams.",
        "A young girl found the missing ring.",
        "The company hired fifty new workers.",
        "Millions of people watched the final match.",
        "My brother painted the fence.",
    ],
)


# ---------------------------------------------------------------------------------------------------------


def norm(s: str) -> str:
    return " ".join(s.lower().split())


def words(s: str) -> frozenset:
    return frozenset(re.findall(r"[a-z0-9']+", s.lower()))


def jaccard(a: frozenset, b: frozenset) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


def load(path: Path) -> list[str]:
    return [json.loads(line)["prompt"] for line in path.read_text().splitlines() if line.strip()]


def build(target: int, seed: int = 0) -> tuple[list[dict], collections.Counter]:
    existing = load(PROMPTS / "train.jsonl") + load(PROMPTS / "val.jsonl")
    val_sets = [words(p) for p in load(PROMPTS / "val.jsonl")]
    seen = {norm(p) for p in existing}
    skipped: collections.Counter = collections.Counter()
    # each template's candidates, shuffled by its own seeded generator, grouped by category
    pools: dict[str, list] = collections.defaultdict(list)
    for i, (cat, gen) in enumerate(TEMPLATES):
        rng = random.Random(seed * 100003 + i)
        cands = gen(rng)
        rng.shuffle(cands)
        pools[cat].append(iter(cands))
    assert set(pools) == set(SHARE), (sorted(pools), sorted(SHARE))
    quota = {c: round(target * s / sum(SHARE.values())) for c, s in SHARE.items()}
    quota[max(SHARE, key=SHARE.get)] += target - sum(quota.values())
    out: list[dict] = []
    for cat in SHARE:
        got = 0
        live = list(pools[cat])
        # round robin over the category's templates: one accepted prompt per template per pass
        while live and got < quota[cat]:
            for it in list(live):
                if got >= quota[cat]:
                    break
                for p in it:
                    key = norm(p)
                    if key in seen:
                        skipped["duplicate (train/val/earlier)"] += 1
                        continue
                    if any(jaccard(words(p), v) >= JACCARD_MAX for v in val_sets):
                        skipped["near-copy of a val prompt"] += 1
                        continue
                    seen.add(key)
                    out.append({"prompt": p, "category": cat})
                    got += 1
                    break
                else:
                    live.remove(it)
        if got < quota[cat]:
            print(f"warning: category {cat} ran out of candidates ({got}/{quota[cat]})")
    random.Random(seed).shuffle(out)
    return out, skipped


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", type=int, default=2500)
    ap.add_argument("--out", type=Path, default=PROMPTS / "train_extra.jsonl")
    args = ap.parse_args()
    rows, skipped = build(args.target)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    print(f"templates: {len(TEMPLATES)}")
    print(f"wrote {len(rows)} prompts to {args.out}")
    print(f"skipped {sum(skipped.values())}: " + (", ".join(f"{k} {v}" for k, v in sorted(skipped.items())) or "none"))
    counts = collections.Counter(r["category"] for r in rows)
    print(f"{'category':<12}{'count':>6}")
    for cat, n in counts.most_common():
        print(f"{cat:<12}{n:>6}")


if __name__ == "__main__":
    main()
