"""Write src/specbridge/data/prompts/train_extra.jsonl: ~2500 diverse, templated user prompts for EAGLE-3 training data.

Why: EAGLE-3 drafters are trained by self-distillation: the target model (SmolLM2-135M-Instruct) regenerates
the response to every training prompt and the drafter learns to predict the target's own tokens and hidden
states. Only the prompts are needed, never reference answers, but they must be many and varied (chat,
explanations, facts, arithmetic, code in several languages, summaries, creative writing, rewriting, emails,
reasoning, ...) or the drafter only learns the few response shapes that 304 prompts in train.jsonl produce.
The validation prompts (src/specbridge/data/prompts/val.jsonl) are the acceptance benchmark, so they are kept out: no
prompt here equals one in train.jsonl or val.jsonl (case/whitespace-insensitive), none repeats, and any
prompt whose lowercase word set has Jaccard similarity >= 0.8 with a val prompt is skipped.

Stdlib only and deterministic (seeded random; same file every run):

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
# subject lists
# ---------------------------------------------------------------------------------------------------------

SCIENCE = [
    "photosynthesis",
    "gravity",
    "black holes",
    "volcanoes",
    "plate tectonics",
    "DNA",
    "vaccines",
    "climate change",
    "the greenhouse effect",
    "magnetism",
    "electricity",
    "sound waves",
    "rainbows",
    "the seasons",
    "evolution",
    "atoms",
    "chemical reactions",
    "the periodic table",
    "friction",
    "inertia",
    "the speed of light",
    "solar eclipses",
    "lightning",
    "hurricanes",
    "the nervous system",
    "digestion",
    "blood types",
    "bacteria",
    "viruses",
    "antibiotics",
    "fungi",
    "ecosystems",
    "food chains",
    "pollination",
    "erosion",
    "fossils",
    "the Big Bang",
    "galaxies",
    "the phases of the Moon",
    "comets",
    "the ozone layer",
    "renewable energy",
    "nuclear energy",
    "static electricity",
    "buoyancy",
    "evaporation",
    "acids and bases",
    "enzymes",
    "cells",
    "genes",
    "the carbon cycle",
    "ocean currents",
    "rainforests",
    "deserts",
    "the water cycle",
    "tsunamis",
    "the human heart",
    "the nitrogen cycle",
    "supernovas",
    "microplastics",
]

TECH = [
    "the Internet",
    "Wi-Fi",
    "cloud computing",
    "machine learning",
    "neural networks",
    "encryption",
    "password managers",
    "two-factor authentication",
    "blockchain",
    "APIs",
    "databases",
    "operating systems",
    "compilers",
    "version control",
    "open-source software",
    "virtual reality",
    "3D printing",
    "GPS",
    "Bluetooth",
    "browser cookies",
    "search engines",
    "spam filters",
    "QR codes",
    "solid-state drives",
    "RAM",
    "CPUs",
    "GPUs",
    "file compression",
    "binary numbers",
    "algorithms",
    "hash functions",
    "smart home devices",
    "self-driving cars",
    "satellites",
    "5G networks",
    "phishing",
    "firewalls",
    "VPNs",
    "large language models",
    "web servers",
    "DNS",
    "containers like Docker",
    "cybersecurity",
    "augmented reality",
    "quantum computing",
]

HISTORY = [
    "the Roman Empire",
    "ancient Egypt",
    "the Renaissance",
    "the Industrial Revolution",
    "the French Revolution",
    "the American Revolution",
    "the printing press",
    "the Silk Road",
    "the Cold War",
    "the fall of the Berlin Wall",
    "the Space Race",
    "the Vikings",
    "the Aztec Empire",
    "the Ming dynasty",
    "ancient Greece",
    "the Black Death",
    "the Magna Carta",
    "the women's suffrage movement",
    "the Great Depression",
    "World War I",
    "the Meiji Restoration",
    "the Ottoman Empire",
    "the Mongol Empire",
    "the steam engine",
    "the Wright brothers' first flight",
    "the discovery of penicillin",
    "the Apollo 11 mission",
    "the Protestant Reformation",
    "the Age of Exploration",
    "the Inca Empire",
    "the Byzantine Empire",
    "the Enlightenment",
    "the civil rights movement",
    "the invention of writing",
    "the Bronze Age",
    "the Panama Canal",
    "the California Gold Rush",
    "the Han dynasty",
    "the Maya civilization",
    "the abolition of slavery in the British Empire",
]

HISTORY_EVENTS = [
    "the French Revolution",
    "the American Revolution",
    "World War I",
    "the Great Depression",
    "the Cold War",
    "the fall of the Roman Empire",
    "the Industrial Revolution",
    "the fall of the Berlin Wall",
    "the Protestant Reformation",
    "the Black Death",
    "the Space Race",
    "the collapse of the Soviet Union",
    "the 2008 financial crisis",
    "the Russian Revolution",
    "the Irish Potato Famine",
]

HEALTH = [
    "getting enough sleep",
    "drinking enough water",
    "regular exercise",
    "stretching every morning",
    "eating more vegetables",
    "eating more fiber",
    "meditation",
    "good posture",
    "limiting screen time",
    "washing your hands",
    "wearing sunscreen",
    "walking every day",
    "strength training",
    "cutting back on sugar",
    "drinking less coffee",
    "flossing",
    "taking breaks from the computer",
    "yoga",
    "eating breakfast",
    "spending time outdoors",
    "journaling",
    "cooking at home",
    "cycling to work",
    "swimming",
    "keeping a regular sleep schedule",
    "deep breathing",
    "eating slowly",
]

FINANCE = [
    "budgeting",
    "compound interest",
    "inflation",
    "credit scores",
    "index funds",
    "an emergency fund",
    "supply and demand",
    "interest rates",
    "income tax",
    "cash flow",
    "profit margins",
    "the stock market",
    "bonds",
    "retirement savings",
    "insurance deductibles",
    "mortgages",
    "cryptocurrency",
    "diversification",
    "a recession",
    "the minimum wage",
    "exchange rates",
    "dividends",
    "a balance sheet",
    "opportunity cost",
    "venture capital",
    "a franchise",
    "student loans",
    "a Roth IRA",
]

AUDIENCES = [
    "a five-year-old",
    "a high school student",
    "a complete beginner",
    "my grandmother",
    "a busy executive",
    "a college freshman",
    "someone who is learning English",
    "a software engineer",
    "a curious teenager",
    "a new employee",
    "a farmer",
    "an artist",
    "a retired teacher",
]

HOW_THINGS = [
    "a refrigerator",
    "a microwave oven",
    "a credit card payment",
    "a solar panel",
    "an electric motor",
    "a car engine",
    "bicycle gears",
    "a touchscreen",
    "a thermostat",
    "a compass",
    "a lock and key",
    "a flush toilet",
    "a vending machine",
    "noise-cancelling headphones",
    "an inkjet printer",
    "an elevator",
    "a hot air balloon",
    "a rocket",
    "a digital camera",
    "a rechargeable battery",
    "a wind turbine",
    "a dishwasher",
    "an airplane wing",
    "email",
    "a heat pump",
    "a barcode scanner",
    "a smoke detector",
    "a pressure cooker",
    "a hearing aid",
    "a washing machine",
    "a traffic light system",
    "a contactless card",
    "a fiber optic cable",
    "a submarine",
    "a parachute",
    "an MRI scanner",
]

CONCEPT_PAIRS = [
    ("weather", "climate"),
    ("a virus", "a bacterium"),
    ("speed", "velocity"),
    ("mass", "weight"),
    ("a comet", "an asteroid"),
    ("RAM", "storage"),
    ("a democracy", "a republic"),
    ("stocks", "bonds"),
    ("a debit card", "a credit card"),
    ("affect", "effect"),
    ("empathy", "sympathy"),
    ("a crocodile", "an alligator"),
    ("a frog", "a toad"),
    ("a simile", "a metaphor"),
    ("HTTP", "HTTPS"),
    ("the Internet", "the World Wide Web"),
    ("a hurricane", "a tornado"),
    ("a lake", "a pond"),
    ("baking soda", "baking powder"),
    ("a fruit", "a vegetable"),
    ("an app", "a website"),
    ("a sprain", "a strain"),
    ("a recession", "a depression"),
    ("a theory", "a hypothesis"),
    ("revenue", "profit"),
    ("a monkey", "an ape"),
    ("a star", "a planet"),
    ("a sea", "an ocean"),
    ("machine learning", "artificial intelligence"),
    ("a loan", "a grant"),
    ("a moth", "a butterfly"),
    ("latitude", "longitude"),
    ("a mean", "a median"),
    ("an introvert", "an extrovert"),
    ("Wi-Fi", "mobile data"),
]

COUNTRIES = [
    "Japan",
    "Brazil",
    "Kenya",
    "Canada",
    "Australia",
    "Egypt",
    "Germany",
    "India",
    "Mexico",
    "Norway",
    "Argentina",
    "Vietnam",
    "Morocco",
    "Peru",
    "Thailand",
    "Poland",
    "Turkey",
    "Nigeria",
    "South Korea",
    "Chile",
    "Sweden",
    "Portugal",
    "New Zealand",
    "Indonesia",
    "Ghana",
    "Greece",
    "Ireland",
    "Colombia",
    "Iceland",
    "the Philippines",
    "Switzerland",
    "Ethiopia",
    "Finland",
    "Malaysia",
    "Cuba",
    "Austria",
    "Pakistan",
    "Hungary",
    "Nepal",
    "Tanzania",
    "Spain",
    "Italy",
    "China",
    "Russia",
    "Saudi Arabia",
    "Israel",
    "Denmark",
    "Belgium",
    "Bolivia",
    "Jamaica",
]

CITIES = [
    "Tokyo",
    "Paris",
    "Rome",
    "Istanbul",
    "Cairo",
    "New York",
    "Rio de Janeiro",
    "Sydney",
    "Barcelona",
    "Amsterdam",
    "Kyoto",
    "Prague",
    "Vienna",
    "Lisbon",
    "Marrakech",
    "Bangkok",
    "Singapore",
    "Cape Town",
    "Vancouver",
    "Buenos Aires",
    "Dublin",
    "Edinburgh",
    "Seoul",
    "Mexico City",
    "Berlin",
    "Venice",
    "Hanoi",
    "Reykjavik",
    "Chicago",
    "Budapest",
    "Athens",
    "Copenhagen",
    "Havana",
    "Dubai",
    "Florence",
]

LANDMARKS = [
    "the Eiffel Tower",
    "Machu Picchu",
    "the Taj Mahal",
    "the Colosseum",
    "Angkor Wat",
    "Petra",
    "the Statue of Liberty",
    "Stonehenge",
    "Mount Kilimanjaro",
    "the Grand Canyon",
    "Uluru",
    "the Acropolis",
    "Chichen Itza",
    "the Sydney Opera House",
    "Victoria Falls",
    "the Leaning Tower of Pisa",
    "Table Mountain",
    "the Forbidden City",
    "the Dead Sea",
    "Niagara Falls",
    "the Sahara Desert",
    "Mount Fuji",
    "the Amazon River",
    "the Galapagos Islands",
    "Lake Baikal",
    "the Alhambra",
]

INVENTIONS = [
    "the telephone",
    "the light bulb",
    "the World Wide Web",
    "the airplane",
    "the radio",
    "the television",
    "the steam engine",
    "the telescope",
    "the microscope",
    "penicillin",
    "the bicycle",
    "the dishwasher",
    "the computer mouse",
    "the sewing machine",
    "the typewriter",
    "the refrigerator",
    "the jet engine",
    "the periodic table",
    "the stethoscope",
    "the zipper",
    "the ballpoint pen",
    "dynamite",
    "the camera",
    "the polio vaccine",
    "the phonograph",
    "the battery",
    "the barcode",
    "the escalator",
]

PEOPLE = [
    "Marie Curie",
    "Leonardo da Vinci",
    "Ada Lovelace",
    "Nelson Mandela",
    "Albert Einstein",
    "Cleopatra",
    "Isaac Newton",
    "Frida Kahlo",
    "Mahatma Gandhi",
    "Galileo Galilei",
    "Charles Darwin",
    "Rosalind Franklin",
    "Genghis Khan",
    "Wolfgang Amadeus Mozart",
    "Alan Turing",
    "Harriet Tubman",
    "Confucius",
    "Nikola Tesla",
    "Jane Austen",
    "Martin Luther King Jr.",
    "Florence Nightingale",
    "Julius Caesar",
    "Amelia Earhart",
    "William Shakespeare",
    "Ludwig van Beethoven",
    "Grace Hopper",
    "Simon Bolivar",
    "Queen Victoria",
    "Vincent van Gogh",
    "Katherine Johnson",
    "Ibn Battuta",
    "Joan of Arc",
    "Louis Pasteur",
    "Rumi",
]

ANIMALS = [
    "octopuses",
    "elephants",
    "honeybees",
    "dolphins",
    "owls",
    "wolves",
    "sea turtles",
    "hummingbirds",
    "koalas",
    "cheetahs",
    "ants",
    "bats",
    "blue whales",
    "giraffes",
    "pandas",
    "crows",
    "frogs",
    "sharks",
    "butterflies",
    "camels",
    "polar bears",
    "hedgehogs",
    "parrots",
    "jellyfish",
    "salmon",
    "kangaroos",
    "tigers",
    "gorillas",
    "beavers",
    "foxes",
    "snails",
    "spiders",
    "horses",
    "rabbits",
    "chameleons",
    "flamingos",
    "axolotls",
    "sloths",
    "otters",
    "seahorses",
]

WORDS = [
    "ephemeral",
    "resilient",
    "ubiquitous",
    "meticulous",
    "ambiguous",
    "candid",
    "pragmatic",
    "serendipity",
    "nostalgia",
    "benevolent",
    "frugal",
    "tenacious",
    "eloquent",
    "mundane",
    "obsolete",
    "plausible",
    "reluctant",
    "skeptical",
    "vivid",
    "diligent",
    "gregarious",
    "humble",
    "inevitable",
    "lethargic",
    "optimistic",
    "profound",
    "scrutinize",
    "tedious",
    "versatile",
    "whimsical",
    "arbitrary",
    "coherent",
    "empathy",
    "fragile",
    "hypothesis",
    "irony",
    "jargon",
    "leverage",
    "mitigate",
    "nuance",
    "paradox",
    "redundant",
    "sustainable",
    "transparent",
    "verbose",
    "zealous",
    "bias",
    "consensus",
    "deadline",
    "feasible",
    "gratitude",
    "integrity",
    "momentum",
    "procrastinate",
    "quaint",
    "thrive",
    "cozy",
]

HOWTO_TASKS = [
    "change a flat tire",
    "unclog a kitchen sink",
    "iron a dress shirt",
    "boil an egg perfectly",
    "set up a new Wi-Fi router",
    "back up my phone",
    "write a resume",
    "start a vegetable garden",
    "remove a coffee stain from a carpet",
    "clean a cast iron pan",
    "sharpen a kitchen knife",
    "fold a fitted sheet",
    "hang a picture frame straight",
    "jump-start a car",
    "make cold brew coffee",
    "take a screenshot on a laptop",
    "reset a forgotten email password",
    "repot a houseplant",
    "train a puppy to sit",
    "fix a squeaky door",
    "patch a small hole in a wall",
    "wash wool sweaters",
    "prepare for a job interview",
    "create a monthly budget",
    "improve my handwriting",
    "learn to touch type",
    "make a paper airplane",
    "meal prep for the week",
    "negotiate a salary",
    "write a thank-you card",
    "pack a suitcase efficiently",
    "defrost a freezer",
    "descale a kettle",
    "plan a small wedding",
    "start running as a beginner",
    "build a campfire safely",
    "make sourdough starter",
    "organize a messy closet",
    "keep basil alive indoors",
    "get rid of fruit flies",
    "paint a room",
    "replace a light switch cover",
    "cook rice on the stove",
    "memorize a speech",
    "give a good toast",
    "read a nutrition label",
    "check my car's oil level",
    "choose a good watermelon",
    "clean my glasses properly",
    "set up a home office",
    "write a good product review",
    "cancel a subscription I forgot about",
    "teach a child to ride a bike",
    "start a book club",
    "make my own candles",
    "whiten white sneakers",
    "deal with a noisy neighbor politely",
    "file a complaint with a company",
    "speed up an old laptop",
    "learn the basics of chess",
    "brew loose-leaf green tea",
    "compost kitchen scraps",
]

GERUND_TASKS = [
    "changing a bike chain",
    "baking bread at home",
    "planting a tree",
    "writing a cover letter",
    "setting up a fish tank",
    "painting a wooden fence",
    "making homemade pasta",
    "cleaning an oven",
    "installing a shelf",
    "making a budget spreadsheet",
    "doing a basic car inspection before a road trip",
    "brewing pour-over coffee",
    "knitting a simple scarf",
    "making a smoothie",
    "applying for a passport",
    "preparing for a marathon",
    "building a birdhouse",
    "learning to swim as an adult",
    "making a podcast",
    "writing a short speech",
    "washing a car by hand",
    "sewing on a button",
    "grilling vegetables",
    "filing taxes for the first time",
    "moving to a new apartment",
    "starting a blog",
    "training for a 5K",
]

HOBBIES = [
    "rock climbing",
    "knitting",
    "photography",
    "gardening",
    "birdwatching",
    "running",
    "yoga",
    "chess",
    "watercolor painting",
    "woodworking",
    "pottery",
    "playing the guitar",
    "playing the piano",
    "baking",
    "calligraphy",
    "hiking",
    "journaling",
    "astronomy",
    "fishing",
    "skateboarding",
    "origami",
    "drawing",
    "cycling",
    "swimming",
    "brewing kombucha",
    "beekeeping",
    "video editing",
    "podcasting",
    "bird photography",
    "stand-up paddleboarding",
    "sewing",
    "bouldering",
    "salsa dancing",
    "embroidery",
]

DISHES = [
    "pancakes",
    "vegetable soup",
    "guacamole",
    "banana bread",
    "fried rice",
    "spaghetti carbonara",
    "chicken curry",
    "hummus",
    "tomato sauce",
    "lentil soup",
    "omelette",
    "French toast",
    "chili",
    "a Greek salad",
    "mashed potatoes",
    "oatmeal cookies",
    "stir-fried tofu",
    "a simple risotto",
    "roasted vegetables",
    "shakshuka",
    "a fruit smoothie bowl",
    "garlic bread",
    "tacos",
    "pesto",
    "a quiche",
    "apple crumble",
    "miso soup",
    "pad thai",
    "baked salmon",
    "a veggie burger",
    "lemonade",
    "chocolate chip muffins",
    "potato salad",
    "black bean soup",
    "granola",
]

INGREDIENTS = [
    "eggs",
    "spinach",
    "rice",
    "chickpeas",
    "tomatoes",
    "potatoes",
    "chicken",
    "cheese",
    "onions",
    "pasta",
    "mushrooms",
    "bell peppers",
    "canned tuna",
    "tofu",
    "bread",
    "carrots",
    "lentils",
    "avocado",
    "bananas",
    "yogurt",
    "zucchini",
    "sweet potatoes",
    "black beans",
    "frozen peas",
]

FOODS = [
    "fresh herbs",
    "bread",
    "avocados",
    "cheese",
    "lettuce",
    "berries",
    "bananas",
    "cooked rice",
    "onions",
    "potatoes",
    "coffee beans",
    "mushrooms",
    "leftover pizza",
    "tomatoes",
    "apples",
    "fresh fish",
    "eggs",
]

SITUATIONS = [
    "feel nervous before my job interview tomorrow",
    "keep procrastinating on my homework",
    "just got my first credit card",
    "have a coworker who takes credit for my work",
    "can't fall asleep at night",
    "forgot my best friend's birthday",
    "have too many browser tabs open all day",
    "want to ask for a raise but I'm scared",
    "feel lonely after moving abroad",
    "spend too much money on takeout",
    "have a big exam in three days and haven't started studying",
    "got a parking ticket I think is unfair",
    "want to quit my job to start a business",
    "feel overwhelmed by my to-do list",
    "have a roommate who never does the dishes",
    "am bored of my workout routine",
    "get distracted by my phone all the time",
    "have to give a presentation in front of 200 people",
    "want to read more books this year",
    "feel burnt out at work",
    "just adopted a cat",
    "am trying to eat healthier but I love snacks",
    "have a friend who always cancels plans",
    "want to learn to code but don't know where to start",
    "broke my phone screen",
    "am going on a first date this weekend",
    "have trouble saying no to people",
    "lost my wallet",
    "keep waking up tired even after eight hours of sleep",
    "want to make my small apartment feel bigger",
    "disagree with my manager about a project",
    "have a long commute and want to use the time well",
]

MEDIA = ["a book", "a movie", "a podcast", "a TV series", "a board game", "a video game", "a documentary", "an album"]
GENRES = [
    "science fiction",
    "mystery",
    "history",
    "cozy fantasy",
    "true crime",
    "comedy",
    "space exploration",
    "cooking",
    "psychology",
    "classic literature",
    "adventure stories",
    "nature",
    "philosophy",
    "sports",
    "puzzles",
    "time travel",
]

IDEA_TARGETS = [
    "a rainy Saturday afternoon",
    "a cheap date night",
    "a team-building activity at work",
    "a science fair project",
    "a kid's birthday party",
    "a blog about cooking",
    "a small business I could start",
    "a family game night",
    "a New Year's resolution",
    "things to do in a small town",
    "healthy lunches to bring to work",
    "a YouTube channel",
    "a gift for a coworker who is retiring",
    "decorating a small balcony",
    "a themed dinner party",
    "a short weekend getaway",
    "a fundraiser for a school",
    "a mobile app",
    "a short story",
    "staying active in winter",
    "a gift for a friend who loves gardening",
    "a picnic menu",
    "an art project with recycled materials",
    "a name for my new puppy",
    "a Halloween costume",
    "a morning routine",
]

TRIPS = [
    "a weekend camping trip",
    "a week at the beach",
    "a business trip to London",
    "a ski trip",
    "a backpacking trip through Europe",
    "a long train journey",
    "a visit to my grandparents",
    "a hiking trip in the mountains",
    "a music festival",
    "a two-week trip to Japan",
    "a road trip with kids",
    "a winter trip to Iceland",
    "a safari in Kenya",
]

FRIEND_SITUATIONS = [
    "just lost their job",
    "is going through a breakup",
    "is moving to another country",
    "seems stressed about exams",
    "just had a baby",
    "is grieving a pet",
    "failed their driving test",
    "is starting a new job and feels anxious",
    "is recovering from surgery",
    "just got rejected from college",
    "is feeling homesick",
]

LIFE_GOALS = [
    "saving money on groceries",
    "waking up earlier",
    "staying focused while working from home",
    "keeping my apartment tidy",
    "making small talk at parties",
    "drinking more water",
    "learning a language on my own",
    "reducing stress during the holidays",
    "taking better phone photos",
    "writing clearer emails",
    "being more patient with my kids",
    "reading faster",
    "keeping houseplants alive",
    "remembering people's names",
    "reducing food waste",
    "public speaking",
    "sticking to a workout plan",
    "cutting down on social media",
    "making friends as an adult",
    "staying warm in a cold apartment",
    "traveling on a budget",
    "studying for math exams",
]

OCCASIONS = [
    "a tenth wedding anniversary",
    "a friend's graduation",
    "a promotion at work",
    "my parents' retirement",
    "a colleague's last day",
    "my dog's birthday",
    "finishing a big project",
    "the first day of spring",
    "a housewarming",
    "my sister's engagement",
    "paying off my student loans",
]

CITIES_TRIP = [
    "Lisbon",
    "Kyoto",
    "Rome",
    "Mexico City",
    "Prague",
    "Edinburgh",
    "Seoul",
    "Cape Town",
    "Vancouver",
    "Barcelona",
    "Istanbul",
    "Hanoi",
    "Copenhagen",
    "Buenos Aires",
]

JOKE_TOPICS = [
    "cats",
    "programmers",
    "coffee",
    "math teachers",
    "the weather",
    "vegetables",
    "dinosaurs",
    "computers",
    "pirates",
    "penguins",
    "space",
    "Mondays",
    "libraries",
    "chemistry",
    "bananas",
    "ghosts",
    "musicians",
]

POEM_TOPICS = [
    "autumn leaves",
    "a rainy morning",
    "the ocean at night",
    "an old library",
    "the first snowfall",
    "a city at dawn",
    "a cup of coffee",
    "growing older",
    "a lighthouse",
    "a garden in spring",
    "the Moon",
    "a long train ride",
    "homesickness",
    "a thunderstorm",
    "a grandmother's kitchen",
    "courage",
    "the stars",
    "a lost umbrella",
    "mountains",
    "a summer festival",
    "silence",
    "a cat sleeping in the sun",
    "the desert wind",
    "hope",
    "city lights",
    "a forgotten toy",
    "the sea",
    "a new beginning",
    "change",
    "a quiet Sunday",
    "a river",
    "the color blue",
    "an empty playground",
    "kindness",
    "a bakery at sunrise",
]

CHARACTERS = [
    "a shy robot",
    "a retired astronaut",
    "a talking cat",
    "a young baker",
    "a lighthouse keeper",
    "a forgetful wizard",
    "a girl who can hear plants",
    "an old fisherman",
    "a detective who is afraid of the dark",
    "a time traveler",
    "a dragon who hates fire",
    "a new student",
    "a lonely ghost",
    "a clumsy knight",
    "a street musician",
    "a grandmother who learns to skateboard",
    "a squirrel",
    "a delivery driver",
]

PLOTS = [
    "finds a mysterious map",
    "gets lost in a big city",
    "has to save the village festival",
    "discovers a secret door in the library",
    "makes an unexpected friend",
    "wins a contest by accident",
    "has one day to fix a big mistake",
    "receives a letter from the future",
    "loses their voice before a big show",
    "tries to cook dinner for the first time",
    "finds a lost puppy",
    "wakes up with a strange new skill",
    "must cross a frozen lake",
    "opens a tiny shop",
    "is stuck in an elevator with a stranger",
]

NOVEL_GENRES = [
    "mystery",
    "science fiction",
    "fantasy",
    "romance",
    "horror",
    "historical",
    "thriller",
    "western",
    "dystopian",
    "comedy",
    "adventure",
    "fairy tale",
    "detective",
    "space opera",
]

LETTERS = [
    ("a soldier", "his family"),
    ("a cat", "its owner"),
    ("a student", "their future self"),
    ("a tree", "the people who cut it down"),
    ("an astronaut on Mars", "her best friend"),
    ("a grandmother", "her newborn grandchild"),
    ("a lighthouse keeper", "a passing ship"),
    ("a customer", "a bakery that closed"),
    ("a robot", "its inventor"),
    ("a teacher", "her first class"),
    ("a retired dog", "the puppy replacing him"),
    ("the Moon", "the Earth"),
    ("a traveler", "her hometown"),
]

DIALOGUES = [
    ("a barista", "a sleepy customer"),
    ("two astronauts", None),
    ("a teacher", "a student who forgot homework"),
    ("a cat", "a dog"),
    ("a doctor", "a nervous patient"),
    ("a tourist", "a local"),
    ("a job interviewer", "a candidate"),
    ("two old friends", None),
    ("a chef", "a food critic"),
    ("a customer", "a tech support agent"),
    ("a parent", "a teenager"),
    ("a knight", "a dragon"),
]

DIALOGUE_TOPICS = [
    "the weather",
    "a missing sandwich",
    "a surprise party",
    "the meaning of success",
    "a broken printer",
    "what to eat for dinner",
    "moving to a new city",
    "a strange noise",
    "a lost key",
    "the future",
]

BUSINESSES = [
    "a neighborhood bakery",
    "a bicycle repair shop",
    "a dog-walking service",
    "an eco-friendly cleaning company",
    "a language school",
    "a plant nursery",
    "a mobile coffee cart",
    "a used bookstore",
    "a yoga studio",
    "a food truck selling tacos",
    "a tutoring service",
    "a recycling program",
    "a local farmers market",
    "a budgeting app",
    "a car wash",
    "a pet grooming salon",
    "a summer reading challenge",
    "a community garden",
    "a handmade soap shop",
    "a 24-hour gym",
    "a vegan restaurant",
    "a kids' coding camp",
]

PRODUCTS = [
    "a smart coffee mug that keeps drinks warm",
    "noise-cancelling earbuds",
    "a foldable electric scooter",
    "a reusable notebook",
    "a solar phone charger",
    "an ergonomic office chair",
    "a self-watering plant pot",
    "a waterproof hiking backpack",
    "a bamboo toothbrush",
    "a kids' science kit",
    "a weighted blanket",
    "a compact air purifier",
    "a handmade ceramic vase",
    "a sleep tracking ring",
    "a cast iron skillet",
    "a portable projector",
    "a wireless mechanical keyboard",
    "a lunch box that heats food",
    "organic dog treats",
    "a language-learning card game",
]

RELATIONS = [
    "my best friend",
    "my boss",
    "my younger brother",
    "my grandmother",
    "a coworker",
    "my neighbor",
    "my daughter turning 16",
    "my dad",
    "my old college roommate",
    "my teacher",
]

TONES = ["funny", "heartfelt", "short", "warm", "formal", "playful"]

FANTASY_THINGS = [
    "a magical sword",
    "a floating city",
    "a friendly sea monster",
    "a forgotten kingdom",
    "a wizard's pet owl",
    "a haunted lighthouse",
    "a space pirate",
    "a tiny village in the clouds",
    "a robot chef",
    "an enchanted forest",
    "a secret society of librarians",
    "a time-traveling train",
]

SCENES = [
    "a busy market",
    "a beach at sunset",
    "a forest after rain",
    "a snowy village",
    "a train station at rush hour",
    "a grandparent's attic",
    "a bakery in the morning",
    "a summer thunderstorm",
    "a quiet library",
    "a campfire at night",
    "a football stadium",
    "a kitchen on a holiday",
]

EMAIL_TARGETS = [
    "my landlord asking to fix a leaking faucet",
    "my manager asking for a day off next Friday",
    "a professor asking for an extension on an assignment",
    "a client explaining that a delivery will be late",
    "a hotel asking about early check-in",
    "my team thanking them for finishing a project",
    "a company asking for a refund on a broken product",
    "a recruiter following up on my application",
    "my neighbor about a package that was delivered to me by mistake",
    "a colleague asking for feedback on my report",
    "a new client introducing myself",
    "a customer apologizing for a billing mistake",
    "my child's teacher asking for a meeting",
    "a gym canceling my membership",
    "a conference organizer asking about speaking opportunities",
    "a former coworker asking for a reference",
    "a supplier asking for a price quote",
    "my team reminding them about tomorrow's meeting",
    "a restaurant asking to book a table for twelve",
    "a mentor thanking them for their advice",
    "an online store asking where my order is",
    "the IT department reporting that my laptop won't start",
    "a vet asking about vaccination for my kitten",
]

EMAIL_TONES = ["polite", "short", "friendly", "formal", "professional", "concise"]

ANNOUNCEMENTS = [
    "a new vacation policy",
    "that the office will be closed on Monday",
    "a new team member",
    "the launch of our new website",
    "a change in the meeting schedule",
    "that we hit our sales target",
    "a team lunch next Friday",
    "a new expense reporting tool",
    "my departure from the company",
    "a fire drill next week",
    "the move to a new office",
]

DECLINES = [
    "a job offer",
    "a wedding invitation",
    "a meeting request",
    "a request to speak at an event",
    "a business partnership proposal",
    "an invitation to join a committee",
    "a request for a discount",
    "a freelance project",
    "a party invitation from a coworker",
]

FOLLOWUPS = [
    "a job interview",
    "a sales meeting",
    "a networking event",
    "a conference call with a client",
    "sending an invoice",
    "a first meeting with a mentor",
    "submitting a proposal",
    "a product demo",
]

RIDDLES = [
    "What has keys but can't open locks?",
    "I speak without a mouth and hear without ears. What am I?",
    "What gets wetter the more it dries?",
    "What has a neck but no head?",
    "The more you take, the more you leave behind. What are they?",
    "What can travel around the world while staying in a corner?",
    "What has hands but can't clap?",
    "What comes once in a minute, twice in a moment, but never in a thousand years?",
    "A man pushes his car to a hotel and tells the owner he's bankrupt. Why?",
    "What has many teeth but can't bite?",
    "If you have me, you want to share me. If you share me, you don't have me. What am I?",
    "What can you catch but not throw?",
    "A bat and a ball cost $1.10 in total. The bat costs $1.00 more than the ball. How much does the ball cost?",
    "If it takes 5 machines 5 minutes to make 5 widgets, how long would 100 machines take to make 100 widgets?",
    "A farmer has 17 sheep and all but 9 run away. How many are left?",
    "Which weighs more, a kilogram of feathers or a kilogram of bricks?",
    "If you're running a race and you pass the person in second place, what place are you in?",
    "How many times can you subtract 10 from 100?",
    "A rooster lays an egg on top of a roof. Which way does it roll?",
    "Some months have 31 days. How many have 28 days?",
    "What word becomes shorter when you add two letters to it?",
    "Mary's father has five daughters: Nana, Nene, Nini, Nono. What is the fifth daughter's name?",
    "If all bloops are razzies and all razzies are lazzies, are all bloops definitely lazzies?",
    "If some doctors are runners and all runners are healthy, must some doctors be healthy?",
    "Two fathers and two sons go fishing and catch three fish, one each. How is that possible?",
    "I have cities but no houses, forests but no trees, and water but no fish. What am I?",
]

HYPOTHETICALS = [
    "the Earth stopped spinning",
    "humans could photosynthesize like plants",
    "there were no mosquitoes",
    "everyone worked only four days a week",
    "the Internet went down for a month",
    "we had no Moon",
    "all the ice at the poles melted",
    "money didn't exist",
    "people could live for 200 years",
    "bees went extinct",
    "cars were banned from city centers",
    "we discovered life on Mars",
    "everyone spoke the same language",
    "it never rained again in a city",
    "schools had no homework",
    "electricity had never been discovered",
    "gravity were twice as strong",
    "nobody could lie",
    "smartphones disappeared overnight",
    "the oceans were fresh water",
    "humans had never invented the wheel",
    "every city had free public transport",
    "there were no clocks",
    "the Sun were twice as big",
]

WHY_DO = [
    "leaves change color in autumn",
    "onions make you cry",
    "cats purr",
    "we have leap years",
    "we get goosebumps",
    "we yawn",
    "planes leave white trails in the sky",
    "stars twinkle",
    "our ears pop on airplanes",
    "some people get seasick",
    "we dream",
    "bubbles form in boiling water",
    "birds fly south for the winter",
    "mirrors flip left and right",
    "our voices sound different on recordings",
    "cut apples turn brown",
    "cats always land on their feet",
    "dogs wag their tails",
]

WHY_DOES = [
    "the sky look blue",
    "ice float on water",
    "the ocean taste salty",
    "bread go stale",
    "metal feel colder than wood",
    "popcorn pop",
    "the Moon look bigger near the horizon",
    "soap clean grease",
    "hot air rise",
    "a spoon look bent in a glass of water",
    "time seem to go faster as we get older",
]

DECISIONS = [
    "take a gap year before college",
    "buy an electric car",
    "learn two languages at once",
    "move to a big city for a job",
    "work at a startup instead of a big company",
    "get a dog while living in an apartment",
    "pay off debt before investing",
    "switch careers at 40",
    "study abroad",
    "buy a used car instead of a new one",
    "go freelance",
    "homeschool children",
    "lease a car",
    "go back to school for a master's degree",
    "use a standing desk",
    "keep a paper planner instead of a digital one",
    "start a business with a friend",
]

ODD_ONE_OUT = [
    "apple, banana, carrot, cherry",
    "Mars, Venus, Moon, Jupiter",
    "violin, cello, trumpet, viola",
    "Paris, Berlin, Madrid, Africa",
    "circle, square, triangle, cube",
    "whale, shark, dolphin, seal",
    "oak, pine, rose, maple",
    "hammer, saw, screwdriver, spoon",
    "Python, Java, HTML, C",
    "red, blue, green, loud",
    "January, March, Monday, June",
    "copper, iron, plastic, gold",
    "eagle, penguin, sparrow, robin",
    "2, 3, 5, 9, 11",
    "tennis, chess, football, basketball",
]

WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

NAMES = [
    "Maria",
    "Tom",
    "Aisha",
    "Kenji",
    "Sofia",
    "Liam",
    "Priya",
    "Carlos",
    "Emma",
    "Omar",
    "Lena",
    "Jamal",
    "Chloe",
    "Diego",
    "Yuki",
    "Noah",
    "Fatima",
    "Ben",
    "Ana",
    "Ravi",
    "Mei",
    "Jonas",
    "Grace",
    "Hassan",
]

ITEMS = [
    "apples",
    "stickers",
    "marbles",
    "books",
    "pencils",
    "cookies",
    "stamps",
    "postcards",
    "coins",
    "seashells",
    "cupcakes",
    "trading cards",
    "balloons",
    "oranges",
    "toy cars",
]

LIST_THINGS = [
    "fruits that are high in vitamin C",
    "famous bridges around the world",
    "indoor plants that are hard to kill",
    "classic novels everyone should read",
    "ways to save energy at home",
    "board games for two players",
    "healthy snacks under 200 calories",
    "questions to ask at the end of a job interview",
    "common programming languages and what they are used for",
    "habits of productive people",
    "animals that live in the Arctic",
    "inventions that changed the world",
    "easy exercises you can do at home",
    "tips for writing a good essay",
    "ways to reduce plastic waste",
    "countries in South America",
    "signs that you need a break from work",
    "things to check before buying a used car",
    "kitchen tools every beginner cook needs",
    "free ways to learn something new",
    "famous female scientists",
    "fun facts about the human body",
    "vegetables that grow well in containers",
    "reasons to learn history",
    "things to do on a long flight",
    "polite ways to end a conversation",
    "ways to make a room feel cozy",
    "words that are often misspelled",
    "renewable energy sources",
    "skills that are useful in any job",
    "dog breeds that are good with children",
    "common logical fallacies",
    "musical instruments for beginners",
]
LIST_COUNTS = ["three", "four", "five", "six", "seven", "ten"]

COMPARE_PAIRS = [
    ("cats", "dogs", "a busy person"),
    ("trains", "planes", "a 500 km trip"),
    ("Python", "JavaScript", "a first programming language"),
    ("renting", "buying a home", "a young family"),
    ("running", "swimming", "losing weight"),
    ("e-books", "paper books", "reading every day"),
    ("tea", "coffee", "staying focused"),
    ("laptops", "tablets", "a university student"),
    ("Android phones", "iPhones", "a first smartphone"),
    ("public schools", "private schools", "a middle-class family"),
    ("solar power", "wind power", "a small farm"),
    ("a gym membership", "home workouts", "staying fit"),
    ("Spanish", "French", "an English speaker learning a new language"),
    ("buses", "bikes", "commuting in a city"),
    ("flashcards", "practice tests", "studying for an exam"),
    ("Excel", "Google Sheets", "a small team"),
    ("gas stoves", "induction cooktops", "a home kitchen"),
    ("SQL databases", "NoSQL databases", "a small web app"),
    ("savings accounts", "index funds", "money I need in five years"),
    ("hiking boots", "trail runners", "day hikes"),
]

PROS_CONS = [
    "electric cars",
    "online learning",
    "living in a big city",
    "social media",
    "a four-day work week",
    "nuclear power",
    "homeschooling",
    "self-checkout machines",
    "owning a car in the city",
    "open-plan offices",
    "freelancing",
    "school uniforms",
    "smart speakers",
    "fast fashion",
    "buying a house with friends",
    "using a credit card for everyday purchases",
    "learning to code with online courses",
    "tiny houses",
    "living with roommates",
    "video games for kids",
    "a vegetarian diet",
    "standing desks",
    "cloud storage",
    "moving abroad for work",
    "competitive sports for children",
    "traveling solo",
    "working night shifts",
]

CHECKLISTS = [
    "moving into a new apartment",
    "a first day at a new job",
    "preparing for a camping trip",
    "hosting a dinner party",
    "launching a small website",
    "a long road trip",
    "getting a new puppy",
    "starting university",
    "preparing a house for winter",
    "a job interview",
    "spring cleaning",
    "traveling with a baby",
    "a home emergency kit",
    "a wedding day",
    "releasing a software update",
]

MISTAKE_CONTEXTS = [
    "learning a new language",
    "writing a resume",
    "starting a garden",
    "investing for the first time",
    "learning to drive",
    "baking bread",
    "giving a presentation",
    "training a dog",
    "buying a used car",
    "writing Python code",
    "running a first marathon",
    "decorating a small apartment",
    "negotiating a salary",
    "taking care of succulents",
    "writing SQL queries",
]

BOOKS = [
    "Hamlet",
    "The Great Gatsby",
    "To Kill a Mockingbird",
    "1984",
    "Moby-Dick",
    "The Odyssey",
    "Frankenstein",
    "The Little Prince",
    "Don Quixote",
    "Jane Eyre",
    "Animal Farm",
    "The Hobbit",
    "A Christmas Carol",
    "The Old Man and the Sea",
    "Macbeth",
    "Alice's Adventures in Wonderland",
    "Charlotte's Web",
    "The Catcher in the Rye",
    "Of Mice and Men",
    "Les Miserables",
    "Treasure Island",
    "The Metamorphosis",
    "Crime and Punishment",
    "Little Women",
    "Dracula",
    "The Wizard of Oz",
]

PASSAGES = [
    "The city council voted on Tuesday to turn the old railway line into a walking and cycling path. Supporters "
    "say it will connect three neighborhoods and reduce traffic, while some residents worry about noise and the "
    "cost of maintenance.",
    "Octopuses are remarkably intelligent. They can open jars, escape from tanks, and recognize individual "
    "people. Each of their eight arms contains neurons that can act somewhat independently of the brain.",
    "Our company will move to a hybrid schedule starting next month. Employees will work in the office on "
    "Tuesdays and Thursdays and may work from home on other days. Managers can approve exceptions.",
    "Sleep plays a key role in memory. During deep sleep the brain replays what it learned during the day and "
    "strengthens important connections. People who sleep poorly often find it harder to learn new skills.",
    "The bakery on Main Street is closing after forty years. The owners, who are retiring, thanked customers "
    "for their loyalty and said the recipes for their famous cinnamon rolls will be passed on to their niece.",
    "Honeybees communicate using a waggle dance. A bee returning to the hive moves in a figure-eight pattern, "
    "and the angle and length of the dance tell other bees the direction and distance of flowers.",
    "The new phone has a larger battery, a better camera for low light, and a slightly lighter body. However, "
    "it costs more than last year's model and no longer includes a charger in the box.",
    "Compound interest means you earn interest not only on the money you saved but also on the interest it has "
    "already earned. Over many years, this can make savings grow much faster than people expect.",
    "Last weekend volunteers planted more than 500 trees along the river. The project aims to reduce flooding, "
    "provide shade, and give birds new places to nest. Organizers plan another planting day in the autumn.",
    "The Great Barrier Reef is the largest coral reef system in the world. Warmer ocean temperatures have "
    "caused several mass bleaching events, in which corals lose the algae that give them color and food.",
    "Meeting notes: the design team will finish the new logo by Friday. Marketing needs two more weeks for the "
    "campaign, so the launch moves from May 3 to May 17. Budget stays the same.",
    "Walking for thirty minutes a day can lower the risk of heart disease, improve mood, and help with sleep. "
    "Experts say the pace matters less than doing it regularly, and short walks after meals are especially helpful.",
    "The library will now lend more than books. Members can borrow tools, board games, musical instruments, and "
    "even cake pans. The goal is to help people save money and reduce waste.",
    "The printing press, developed by Johannes Gutenberg around 1440, made books much cheaper to produce. Ideas "
    "spread faster, literacy grew, and scientific and religious debates reached many more people.",
    "A recent survey found that most remote workers feel more productive at home, but many also report feeling "
    "isolated. Companies are experimenting with regular in-person meetups to keep teams connected.",
    "Volcanoes form where molten rock, called magma, rises to the surface. Some erupt explosively, throwing ash "
    "high into the air, while others release slow rivers of lava that can flow for kilometers.",
    "Customer review: the blender is powerful and easy to clean, but it is very loud and the lid sometimes leaks "
    "when it is full. For the price, I'm mostly happy with it.",
    "The school will start thirty minutes later next year. Research suggests teenagers' body clocks shift later "
    "during adolescence, and schools that changed their schedules reported better attendance and grades.",
    "Recycling only works if materials are clean and sorted correctly. A greasy pizza box or a plastic bag in "
    "the paper bin can contaminate a whole batch, which then ends up in a landfill.",
    "Marathon runners often hit 'the wall' around kilometer 30, when the body runs low on stored energy. Eating "
    "carbohydrates during the race and pacing carefully can help avoid it.",
    "The museum's new exhibit features everyday objects from ancient Rome, including coins, oil lamps, and "
    "children's toys. Curators hope it shows visitors that ordinary Romans lived lives much like ours.",
    "Starting next week, the bus route 12 will run every ten minutes instead of every twenty during rush hour. "
    "The city hopes the change will encourage more people to leave their cars at home.",
]

SUMMARY_INSTRUCTIONS = [
    "Summarize this in one sentence: {p}",
    "What is the main idea of this paragraph? {p}",
    "Summarize the following text in three short bullet points: {p}",
    "TL;DR this for me: {p}",
    "Explain this to me in simpler words: {p}",
    "Write a headline for this text: {p}",
    "What are the key facts in this passage? {p}",
]

BAD_GRAMMAR = [
    "Me and him goes to the store yesterday.",
    "She don't like apples.",
    "Their going to be late for the meeting.",
    "I has finished my homework already.",
    "The dog wagged it's tail.",
    "Everyone have their own opinion.",
    "We was planning to visit you tomorrow.",
    "He runned very fast in the race.",
    "Less people came than we expected.",
    "Who's book is this?",
    "I could of helped you.",
    "The informations you gave was very useful.",
    "She is more taller than her sister.",
    "Between you and I, the plan won't work.",
    "I seen that movie last week.",
    "There is many reasons to learn a language.",
    "Him and me are best friends.",
    "The childs are playing outside.",
    "I am agree with you.",
    "Your welcome to join us.",
    "He don't know nothing about it.",
    "Can you borrow me your pen?",
    "The team have won they're last game.",
    "I didn't went to school today.",
]

CASUAL = [
    "hey, can u send me the report asap?",
    "sorry i can't make it tmrw, something came up",
    "gonna be late, traffic is crazy",
    "thx for the help yesterday, u saved me",
    "the meeting was kinda pointless tbh",
    "can we push the call to next week?",
    "this price is way too high for us",
    "i need the files by friday or we're in trouble",
    "cool, let's do it",
    "we messed up the order, our bad",
    "got your message, will check it later",
    "the app keeps crashing, fix it pls",
]

COMPLEX_TEXT = [
    "The utilization of renewable energy sources is imperative for the mitigation of anthropogenic climate change.",
    "Pursuant to the terms of the agreement, the lessee shall remit payment no later than the fifth day of each month.",
    "The patient exhibited symptoms consistent with an acute viral infection of the upper respiratory tract.",
    "Notwithstanding the aforementioned considerations, the committee has elected to postpone its deliberations.",
    "The implementation of the new software necessitates comprehensive training for all personnel.",
    "Individuals experiencing persistent fatigue are advised to consult a medical professional.",
    "The proliferation of misinformation on digital platforms poses a substantial threat to public discourse.",
    "Photosynthesis is the process by which autotrophic organisms convert light energy into chemical energy.",
    "The municipality will commence infrastructure enhancements in the forthcoming fiscal quarter.",
    "Due to unforeseen circumstances, the event has been rescheduled to a later date to be determined.",
    "Excessive consumption of sodium is correlated with elevated blood pressure in many populations.",
    "The organization endeavors to facilitate equitable access to educational resources.",
    "Inflation erodes the purchasing power of currency, diminishing what consumers can acquire with fixed incomes.",
]

WORDY = [
    "At this point in time, we are currently in the process of reviewing your application.",
    "Due to the fact that it was raining, we made the decision to stay inside.",
    "In my personal opinion, I think that this is a really very good idea.",
    "It is absolutely essential that each and every employee completes the training.",
    "The reason why I am writing this email is because I want to ask a question.",
    "We would like to take this opportunity to thank you for your continued support.",
    "In the event that you have any questions, please do not hesitate to contact us.",
    "She is a person who is very kind and who always helps other people.",
    "The meeting that was held yesterday afternoon lasted for a period of three hours.",
    "For the purpose of saving money, we decided to cook our meals at home.",
]

BLUNT = [
    "Send me the numbers now.",
    "Your report has too many mistakes.",
    "No, we can't change the deadline.",
    "You're late again.",
    "This design is not what we asked for.",
    "Stop sending me these emails.",
    "I need an answer today.",
    "We're not going to renew your contract.",
    "That idea won't work.",
    "Clean up the kitchen after yourself.",
]

JARGON = [
    "Let's circle back offline and leverage our synergies to move the needle.",
    "We need to boil the ocean less and focus on the low-hanging fruit.",
    "The API returned a 404 because the endpoint was deprecated in the last release.",
    "Your premium is due, and your deductible resets at the start of the policy year.",
    "The stock closed down 3% after the company missed earnings expectations.",
    "The server is throttling requests because we exceeded the rate limit.",
    "Please RSVP by EOD and loop in anyone who's OOO.",
    "The patient is NPO after midnight before the procedure.",
    "We're pivoting to a B2B SaaS model to improve our unit economics.",
    "The build failed because of a merge conflict in the main branch.",
]

CODE_TASKS = [
    "reverses a string",
    "checks if a number is even",
    "computes the factorial of a number",
    "finds the largest value in a list",
    "removes duplicates from a list",
    "counts the words in a sentence",
    "converts Celsius to Fahrenheit",
    "checks whether a year is a leap year",
    "sums the digits of a number",
    "merges two sorted lists into one sorted list",
    "capitalizes the first letter of each word",
    "finds the second largest number in a list",
    "counts how many times each character appears in a string",
    "checks if two strings are anagrams",
    "flattens a nested list",
    "generates a random password",
    "computes the average of a list of numbers",
    "converts a decimal number to binary",
    "finds the greatest common divisor of two numbers",
    "checks whether a number is prime",
    "sorts a list of names alphabetically",
    "returns the longest word in a sentence",
    "removes all whitespace from a string",
    "performs a binary search on a sorted list",
    "implements bubble sort",
    "rotates a list by k positions",
    "returns the intersection of two lists",
    "checks whether a string contains only digits",
    "prints the multiplication table for a number",
    "finds the missing number in a list containing 1 to n",
    "checks whether the brackets in a string are balanced",
    "converts minutes into hours and minutes",
    "reverses the order of words in a sentence",
    "returns the sum of all even numbers in a list",
    "calculates the area of a circle from its radius",
    "finds the most common element in a list",
    "truncates a string to a given length",
    "counts the number of uppercase letters in a string",
    "checks whether a list is sorted",
    "splits a list into chunks of size n",
    "returns the first non-repeating character in a string",
    "converts a Roman numeral to an integer",
    "calculates compound interest",
    "returns all the prime numbers below n",
    "computes the running total of a list",
]

C_TASKS = [
    "reverses a string in place",
    "computes the factorial of an integer",
    "finds the largest element in an array",
    "swaps two integers using pointers",
    "counts the vowels in a string",
    "checks whether a number is prime",
    "returns the length of a string without using strlen",
    "sorts an array of integers with insertion sort",
    "converts a string to uppercase",
    "computes the sum of an array",
    "checks whether a number is a palindrome",
    "copies one string into another",
    "finds the GCD of two numbers",
    "prints a right triangle of stars",
    "counts the number of set bits in an integer",
    "implements a simple linked list push function",
]

CODE_LANGS = ["Python", "JavaScript", "Java", "TypeScript", "Go", "Rust", "C++", "C#", "Ruby"]

PY_HOWTOS = [
    "read a CSV file",
    "make an HTTP GET request",
    "sort a dictionary by its values",
    "parse a JSON string",
    "create a virtual environment",
    "format a date as YYYY-MM-DD",
    "write a list of lines to a file",
    "get the current date and time",
    "iterate over a dictionary",
    "measure how long a function takes",
    "merge two dictionaries",
    "parse command-line arguments",
    "check if a file exists",
    "convert a string to an integer safely",
    "remove an item from a list by value",
    "use a lambda with sorted",
    "download a file from a URL",
    "count occurrences in a list",
    "generate a random number between 1 and 100",
    "split a string by commas",
    "reverse a list",
    "find the index of an item in a list",
    "create a simple class with a constructor",
    "write a unit test",
    "use enumerate in a for loop",
    "pretty-print a dictionary",
    "remove duplicates but keep order",
    "read environment variables",
    "run a shell command",
    "zip two lists together",
    "use a dataclass",
]

JS_HOWTOS = [
    "add an item to an array",
    "loop over an object's keys",
    "fetch data from an API",
    "debounce a function",
    "copy an array",
    "check if a variable is undefined",
    "convert a string to a number",
    "sort an array of objects by a property",
    "remove an element from an array",
    "use async and await",
    "format a number as currency",
    "get the current URL",
    "add a click event listener",
    "store data in localStorage",
    "merge two objects",
    "use template literals",
    "filter an array",
    "round a number to two decimal places",
    "find an element in an array",
    "parse a date string",
]

SQL_TASKS = [
    "selects all customers from the customers table who live in Paris",
    "counts how many orders each customer has placed",
    "finds the ten most expensive products",
    "returns the average salary per department from an employees table",
    "lists employees hired in 2023",
    "finds customers who have never placed an order",
    "joins the orders and customers tables to show each order with the customer's name",
    "deletes all rows from a logs table older than 30 days",
    "updates the price of a product with id 42 to 19.99",
    "finds duplicate email addresses in a users table",
    "returns the total sales for each month",
    "selects the second highest salary from an employees table",
    "creates a table for storing blog posts",
    "finds products that are out of stock",
    "lists the top five customers by total spending",
    "counts the number of users who signed up each day",
    "selects all students with a grade above 90, ordered by name",
    "inserts a new row into a books table",
    "finds all orders placed in the last 7 days",
    "returns each department with more than five employees",
    "calculates the percentage of orders that were refunded",
    "adds an index on the email column of a users table",
]

BASH_TASKS = [
    "counts the lines in every .txt file in a folder",
    "finds all files larger than 100 MB",
    "renames all .jpeg files to .jpg",
    "shows the ten largest files in the current directory",
    "deletes files older than 30 days in a folder",
    "searches all Python files for the word TODO",
    "compresses a folder into a .tar.gz archive",
    "prints the disk usage of each subdirectory",
    "shows which process is using port 8080",
    "backs up a directory with the date in the archive name",
    "counts how many times each word appears in a file",
    "downloads a file and checks its size",
    "replaces 'foo' with 'bar' in every file in a directory",
    "prints the last 50 lines of a log file and follows it",
    "lists all users on a Linux system",
    "checks whether a website is up",
    "creates 10 empty files named file1 to file10",
    "extracts the second column of a CSV file",
    "loops over all .png files and prints their names",
    "shows the total memory and free memory",
    "finds and removes empty directories",
    "sorts a file and removes duplicate lines",
    "monitors CPU usage every 5 seconds",
]

LINUX_CMDS = [
    "grep",
    "chmod",
    "chown",
    "ls -la",
    "ps aux",
    "top",
    "tar -xzf",
    "curl",
    "ssh",
    "scp",
    "find",
    "awk",
    "sed",
    "du -sh",
    "df -h",
    "kill",
    "sudo",
    "cron",
    "ln -s",
    "xargs",
    "tail -f",
    "head",
    "wc -l",
    "rsync",
    "git status",
    "git stash",
    "git rebase",
    "git log",
    "git branch",
    "git pull",
    "git clone",
]

CODE_CONCEPTS = [
    "recursion",
    "a closure",
    "a race condition",
    "dependency injection",
    "a pointer",
    "polymorphism",
    "an interface",
    "memoization",
    "big-O notation",
    "a stack",
    "a queue",
    "a linked list",
    "garbage collection",
    "a hash table",
    "inheritance",
    "encapsulation",
    "an API",
    "a callback function",
    "a promise in JavaScript",
    "a deadlock",
    "a REST API",
    "a unit test",
    "a binary tree",
    "dynamic programming",
    "a regular expression",
    "an index in a database",
    "a foreign key",
    "type inference",
    "a compiler",
    "an interpreter",
    "a thread",
    "a mutex",
    "caching",
    "a microservice",
    "continuous integration",
    "a null pointer exception",
    "immutability",
    "a generator in Python",
    "a decorator in Python",
    "JSON",
]

CODE_PAIRS = [
    "== and === in JavaScript",
    "a list and a set in Python",
    "git merge and git rebase",
    "let and const in JavaScript",
    "a process and a thread",
    "an abstract class and an interface in Java",
    "TCP and UDP",
    "SQL and NoSQL",
    "a compiler and an interpreter",
    "a stack and a heap",
    "GET and POST requests",
    "append and extend in Python",
    "INNER JOIN and LEFT JOIN",
    "null and undefined in JavaScript",
    "a shallow copy and a deep copy",
    "static and dynamic typing",
    "break and continue",
    "an array and a linked list",
    "is and == in Python",
    "a function and a method",
    "HTTP status codes 401 and 403",
    "var and let in JavaScript",
]

SNIPPETS = [
    ("Python", "print([x * 2 for x in range(5) if x % 2 == 0])"),
    ("Python", "d = {}\nfor w in text.split():\n    d[w] = d.get(w, 0) + 1"),
    ("Python", "def f(n):\n    return 1 if n <= 1 else n * f(n - 1)"),
    ("Python", "with open('data.txt') as fh:\n    lines = [l.strip() for l in fh if l.strip()]"),
    ("Python", "names = sorted(people, key=lambda p: p['age'], reverse=True)"),
    ("JavaScript", "const evens = nums.filter(n => n % 2 === 0).map(n => n * n);"),
    ("JavaScript", "setTimeout(() => console.log('done'), 1000);"),
    ("JavaScript", "const total = cart.reduce((sum, item) => sum + item.price, 0);"),
    ("JavaScript", "document.querySelector('#btn').addEventListener('click', () => alert('Hi'));"),
    ("C", "for (int i = 0; i < n; i++) { sum += a[i]; }"),
    ("C", "int *p = malloc(10 * sizeof(int));\nif (p == NULL) return 1;"),
    ("Java", "List<String> upper = names.stream().map(String::toUpperCase).toList();"),
    ("Java", "public static int max(int a, int b) { return a > b ? a : b; }"),
    ("SQL", "SELECT department, COUNT(*) FROM employees GROUP BY department HAVING COUNT(*) > 3;"),
    ("bash", 'for f in *.log; do gzip "$f"; done'),
    ("bash", "ps aux | grep python | wc -l"),
]

BUGGY = [
    "def average(nums):\n    return sum(nums) / len(nums) + 1",
    "for i in range(1, 10):\n    if i % 2 = 0:\n        print(i)",
    "def is_even(n):\n    return n % 2 == 1",
    "items = [1, 2, 3]\nprint(items[3])",
    "def greet(name):\n    print('Hello, ' + name)\ngreet()",
    "total = 0\nfor n in [1, 2, 3]:\n    total = n\nprint(total)",
    "def add_item(item, items=[]):\n    items.append(item)\n    return items",
    "count = '5'\nprint(count + 1)",
    "while x < 10:\n    print(x)",
    "def last(lst):\n    return lst[len(lst)]",
]

PY_TO_JS = [
    "def square(x):\n    return x * x",
    "names = [n.upper() for n in names]",
    "if age >= 18:\n    print('adult')\nelse:\n    print('minor')",
    "total = sum(prices)",
    "for i, name in enumerate(names):\n    print(i, name)",
    "person = {'name': 'Ana', 'age': 30}\nprint(person['name'])",
]

CLASS_ENTITIES = [
    "a bank account with deposit and withdraw methods",
    "a to-do list that can add and remove tasks",
    "a rectangle with methods for area and perimeter",
    "a simple stack with push and pop",
    "a library book that can be checked out and returned",
    "a temperature that converts between Celsius and Fahrenheit",
    "a shopping cart that calculates a total price",
    "a student with a name and a list of grades",
    "a counter that can be incremented and reset",
    "a playing card deck that can be shuffled",
    "a timer that measures elapsed time",
    "a contact in an address book",
]

REGEX_TARGETS = [
    "a US phone number",
    "an email address",
    "a date in the format YYYY-MM-DD",
    "a hex color code",
    "a five-digit ZIP code",
    "a word that starts with a capital letter",
    "an IPv4 address",
    "a time in 24-hour format",
    "a URL that starts with https",
    "a string of only lowercase letters",
    "a number with exactly two decimal places",
    "a hashtag",
]

UNITS = [
    # (from, to, low, high, step)
    ("kilometers", "miles", 1, 100, 1),
    ("miles", "kilometers", 1, 60, 1),
    ("pounds", "kilograms", 1, 250, 1),
    ("kilograms", "pounds", 1, 120, 1),
    ("degrees Celsius", "degrees Fahrenheit", -20, 45, 1),
    ("degrees Fahrenheit", "degrees Celsius", 0, 110, 1),
    ("inches", "centimeters", 1, 80, 1),
    ("feet", "meters", 1, 50, 1),
    ("liters", "gallons", 1, 40, 1),
    ("cups", "milliliters", 1, 8, 1),
    ("ounces", "grams", 1, 32, 1),
    ("meters", "feet", 1, 200, 1),
    ("hours", "minutes", 1, 48, 1),
    ("minutes", "seconds", 1, 90, 1),
    ("megabytes", "kilobytes", 1, 512, 1),
    ("gigabytes", "megabytes", 1, 64, 1),
    ("square meters", "square feet", 5, 200, 5),
    ("tablespoons", "teaspoons", 1, 12, 1),
    ("days", "hours", 1, 30, 1),
    ("weeks", "days", 1, 52, 1),
    ("yards", "meters", 1, 100, 1),
]

HOW_MANY = [
    ("seconds", "hour"),
    ("minutes", "day"),
    ("hours", "week"),
    ("days", "leap year"),
    ("centimeters", "meter"),
    ("millimeters", "kilometer"),
    ("grams", "kilogram"),
    ("ounces", "pound"),
    ("inches", "foot"),
    ("feet", "mile"),
    ("seconds", "day"),
    ("weeks", "year"),
    ("milliliters", "liter"),
    ("months", "decade"),
    ("minutes", "week"),
    ("years", "century"),
    ("cents", "dollar"),
    ("bytes", "kilobyte"),
]

ROUND_PLACES = ["whole number", "tenth", "hundredth", "ten", "hundred"]

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
cross("explain", "Explain {t} to {a}.", t=SCIENCE + TECH, a=AUDIENCES)
cross("explain", "Can you explain {t} in simple terms?", t=SCIENCE + TECH + FINANCE)
cross("explain", "How does {t} work?", t=HOW_THINGS)
cross("explain", "Give me a beginner's introduction to {t}. Why should I care?", t=TECH + FINANCE)
cross("explain", "In two or three sentences, tell me about {t}.", t=SCIENCE + TECH)
cross("explain", "What's the difference between {p}?", p=[f"{a} and {b}" for a, b in CONCEPT_PAIRS])
cross("explain", "Explain {t} like I'm new to personal finance.", t=FINANCE)
cross("explain", "What are the health benefits of {h}?", h=HEALTH)
cross("explain", "Why was {h} so important in history?", h=HISTORY)
cross("explain", "What were the main causes of {e}?", e=HISTORY_EVENTS)
cross("explain", "Give me a quick overview of {h} for a history class.", h=HISTORY)
cross("explain", "Explain how {t} affects everyday life.", t=TECH + FINANCE)
cross(
    "explain",
    "I'm {a}. Can you explain {t} to me?",
    a=["a nurse", "a chef", "a lawyer", "a musician", "a truck driver", "a high school student", "an accountant"],
    t=TECH + FINANCE,
)

# --- factual questions ------------------------------------------------------------------------------------
cross("factual", "What is the capital of {c}?", c=COUNTRIES)
cross("factual", "What language is mainly spoken in {c}?", c=COUNTRIES)
cross("factual", "What currency is used in {c}?", c=COUNTRIES)
cross("factual", "Which continent is {c} in?", c=COUNTRIES)
cross("factual", "Where is {l} located?", l=LANDMARKS)
cross("factual", "Tell me a little about {l}.", l=LANDMARKS)
cross("factual", "Who invented {i}, and when?", i=INVENTIONS)
cross("factual", "Who was {p}?", p=PEOPLE)
cross("factual", "What is {p} best known for?", p=PEOPLE)
cross("factual", "What do {a} eat?", a=ANIMALS)
cross("factual", "Where do {a} live in the wild?", a=ANIMALS)
cross("factual", "How long do {a} usually live?", a=ANIMALS)
cross("factual", "What is {c} famous for?", c=CITIES)
cross("factual", "What does the word '{w}' mean?", w=WORDS)
cross("factual", "Define '{w}' and use it in a sentence.", w=WORDS)
cross("factual", "What is a synonym and an antonym for '{w}'?", w=WORDS)
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
    f, t, lo, hi, step = r.choice(UNITS)
    return r.choice(["Convert {v} {f} to {t}.", "How many {t} is {v} {f}?"]).format(v=r.randrange(lo, hi + 1, step), f=f, t=t)


@numeric("math")
def _how_many(r):
    small, big = r.choice(HOW_MANY)
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
    n1, n2 = r.sample(NAMES, 2)
    a, b = r.randint(3, 60), r.randint(2, 40)
    item = r.choice(ITEMS)
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
    n = r.choice(NAMES)
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
        n=r.choice(NAMES),
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
    return f"Round {x} to the nearest {r.choice(ROUND_PLACES)}."


@numeric("math")
def _pizza(r):
    n, k = r.randint(6, 24), r.randint(2, 7)
    return r.choice(
        [
            f"A pizza is cut into {n} slices and shared equally by {k} people. How many slices does each get, and how many are left over?",
            f"There are {n * k + r.randint(0, k - 1)} students and each bus holds {n + 20}. How many buses are needed?",
            f"If today is {r.choice(WEEKDAYS)}, what day of the week will it be in {r.randint(3, 100)} days?",
        ]
    )


# --- code -------------------------------------------------------------------------------------------------
cross("code", "Write a {l} function that {t}.", l=CODE_LANGS, t=CODE_TASKS)
cross("code", "Write a C function that {t}.", t=C_TASKS)
cross("code", "How do I {t} in Python?", t=PY_HOWTOS)
cross("code", "How do I {t} in JavaScript?", t=JS_HOWTOS)
cross("code", "Write a SQL query that {t}.", t=SQL_TASKS)
cross("code", "Write a bash command that {t}.", t=BASH_TASKS)
cross("code", "What does the `{c}` command do? Give an example.", c=LINUX_CMDS)
cross("code", "Explain {c} with a short code example.", c=CODE_CONCEPTS)
cross("code", "Explain the difference between {p}.", p=CODE_PAIRS)
cross("code", "Explain what this {s}", s=[f"{lang} code does:\n{code}" for lang, code in SNIPPETS])
cross("code", "Find the bug in this Python code:\n{b}", b=BUGGY)
cross("code", "Convert this Python code to JavaScript:\n{c}", c=PY_TO_JS)
cross("code", "Write a {l} class that represents {e}.", l=["Python", "Java", "TypeScript", "C#"], e=CLASS_ENTITIES)
cross("code", "Write a regular expression that matches {t}.", t=REGEX_TARGETS)
cross("code", "Write Python unit tests for a function that {t}.", t=CODE_TASKS)
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
cross("howto", "How do I {t}?", t=HOWTO_TASKS)
cross("howto", "What's the easiest way to {t}?", t=HOWTO_TASKS)
cross("howto", "Give me step-by-step instructions for {t}.", t=GERUND_TASKS)
cross("howto", "How do I get started with {h}?", h=HOBBIES)
cross("howto", "What equipment do I need to start {h}, and what does it cost roughly?", h=HOBBIES)
cross("howto", "Give me a simple recipe for {d}.", d=DISHES)
cross("howto", "What can I cook with {i}?", i=[f"{a}, {b} and {c}" for a, b, c in itertools.combinations(INGREDIENTS, 3)])
cross("howto", "What's the best way to store {f} at home?", f=FOODS)
cross("howto", "How can I make {d} healthier?", d=DISHES)
cross("howto", "I'm a beginner at {h}. What should I practice in my first month?", h=HOBBIES)

# --- chat / advice ----------------------------------------------------------------------------------------
cross("chat", "I {s}. What should I do?", s=SITUATIONS)
cross("chat", "Can you recommend {m} for someone who likes {g}?", m=MEDIA, g=GENRES)
cross("chat", "Give me {n} ideas for {t}.", n=["three", "five", "a few"], t=IDEA_TARGETS)
cross("chat", "What should I pack for {t}?", t=TRIPS)
cross("chat", "My friend {s}. How can I support them?", s=FRIEND_SITUATIONS)
cross("chat", "Any tips for {g}?", g=LIFE_GOALS)
cross("chat", "Tell me a joke about {t}.", t=JOKE_TOPICS)
cross("chat", "What's a nice way to celebrate {o}?", o=OCCASIONS)
cross("chat", "Can you help me plan a {n}-day trip to {c}?", n=["two", "three", "four", "five", "seven"], c=CITIES_TRIP)
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
cross("creative", "Write a short poem about {t}.", t=POEM_TOPICS)
cross("creative", "Write a haiku about {t}.", t=POEM_TOPICS)
cross("creative", "Write a limerick about {c}.", c=CHARACTERS)
cross("creative", "Write a short story about {c} who {p}.", c=CHARACTERS, p=PLOTS)
cross("creative", "Write the opening paragraph of a {g} novel.", g=NOVEL_GENRES)
cross("creative", "Write a letter from {p}.", p=[f"{a} to {b}" for a, b in LETTERS])
cross("creative", "Write a short dialogue between {p} about {t}.", p=[f"{a} and {b}" if b else a for a, b in DIALOGUES], t=DIALOGUE_TOPICS)
cross("creative", "Come up with a catchy slogan for {b}.", b=BUSINESSES)
cross("creative", "Write a product description for {p}.", p=PRODUCTS)
cross("creative", "Write a {t} birthday message for {r}.", t=TONES, r=RELATIONS)
cross("creative", "Write the chorus of a song about {t}.", t=POEM_TOPICS)
cross("creative", "Invent a name and a short backstory for {f}.", f=FANTASY_THINGS)
cross("creative", "Describe {s} using all five senses.", s=SCENES)
cross(
    "creative",
    "Write a thank-you note to {r} for {g}.",
    r=RELATIONS,
    g=["a thoughtful gift", "helping me move", "dinner last night", "their advice", "a book recommendation"],
)
cross("creative", "Write a short bedtime story for a child about {a}.", a=ANIMALS)
cross(
    "creative",
    "Write an acrostic poem using the word {w}.",
    w=["SPRING", "OCEAN", "FRIEND", "COFFEE", "DREAM", "MUSIC", "HOME", "LIGHT", "BRAVE", "SMILE", "RAIN", "GARDEN"],
)

# --- emails -----------------------------------------------------------------------------------------------
cross("email", "Write a {t} email to {x}.", t=EMAIL_TONES, x=EMAIL_TARGETS)
cross("email", "Draft a short email to my team announcing {a}.", a=ANNOUNCEMENTS)
cross("email", "Write an email politely declining {d}.", d=DECLINES)
cross("email", "Help me write a follow-up email after {f}.", f=FOLLOWUPS)

# --- reasoning --------------------------------------------------------------------------------------------
fixed("reasoning", RIDDLES)
cross("reasoning", "What would happen if {h}?", h=HYPOTHETICALS)
cross("reasoning", "Why do {p}?", p=WHY_DO)
cross("reasoning", "Why does {p}?", p=WHY_DOES)
cross("reasoning", "Is it a good idea to {d}? Think through both sides.", d=DECISIONS)
cross("reasoning", "Which one doesn't belong, and why: {s}?", s=ODD_ONE_OUT)


@numeric("reasoning")
def _taller(r):
    a, b, c = r.sample(NAMES, 3)
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
    a, b = r.sample(NAMES, 2)
    x, d = r.randint(5, 40), r.randint(2, 15)
    return r.choice(
        [
            f"{a} is {x} years old. {b} is {d} years older than {a}. How old will {b} be in 5 years?",
            f"In {d} years, {a} will be twice as old as {a} is now. How old is {a} now?",
            f"{a} is {x} and {b} is {x + d}. In how many years will their ages add up to {2 * x + d + 2 * d}?",
        ]
    )


# --- lists, comparisons, pros and cons --------------------------------------------------------------------
cross("list", "List {n} {t}.", n=LIST_COUNTS, t=LIST_THINGS)
cross("list", "Compare {p}.", p=[f"{a} and {b} for {c}" for a, b, c in COMPARE_PAIRS])
cross("list", "{p}", p=[f"{cap(a)} or {b}: which is better for {c}?" for a, b, c in COMPARE_PAIRS])
cross("list", "What are the pros and cons of {t}?", t=PROS_CONS)
cross("list", "Give me a checklist for {c}.", c=CHECKLISTS)
cross("list", "What are the most common mistakes people make when {m}?", m=MISTAKE_CONTEXTS)
cross(
    "list", "Make a table comparing {p}.", p=[f"{a} and {b}" for a, b in CONCEPT_PAIRS[:20]] + [f"{a} and {b}" for a, b, _ in COMPARE_PAIRS]
)
cross("list", "Give me {n} interesting facts about {a}.", n=["two", "four", "five"], a=ANIMALS + LANDMARKS)

# --- summaries --------------------------------------------------------------------------------------------
for _instr in SUMMARY_INSTRUCTIONS:
    cross("summary", _instr.replace("{p}", "{passage}"), passage=PASSAGES)
cross("summary", "Summarize the plot of {b}.", b=BOOKS)
cross("summary", "Give me a short summary of {b} without spoilers.", b=BOOKS)
cross("summary", "Summarize {h} in five sentences.", h=HISTORY)

# --- rewriting, grammar, plain English --------------------------------------------------------------------
cross("rewrite", "Fix the grammar in this sentence: {s}", s=BAD_GRAMMAR)
cross("rewrite", 'Rewrite this message so it sounds professional: "{s}"', s=CASUAL)
cross("rewrite", "Rewrite this in simple English: {s}", s=COMPLEX_TEXT)
cross("rewrite", "Make this sentence shorter: {s}", s=WORDY)
cross("rewrite", 'Rewrite this so it sounds friendlier: "{s}"', s=BLUNT)
cross("rewrite", "Translate this into plain English: {s}", s=JARGON)
cross("rewrite", "Paraphrase this sentence in two different ways: {s}", s=COMPLEX_TEXT + WORDY)
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
