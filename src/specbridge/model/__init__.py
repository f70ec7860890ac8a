"""Models in plain PyTorch: the EAGLE-3 drafter (shared by train and eval) and target loading.

Importing this package needs torch; the rest of specbridge does not.
"""
