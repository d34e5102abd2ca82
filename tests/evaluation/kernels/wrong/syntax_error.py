import torch

def cos(x)
    return x
