"""Records of the 50 cuBLAS operators of KernelGenBench-MS (source "cublas")."""
