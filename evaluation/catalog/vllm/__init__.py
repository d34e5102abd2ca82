"""Records of the 50 vLLM 0.13 custom operators of KernelGenBench-MS (namespace vllm13)."""
