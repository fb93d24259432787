"""The test bed: two network namespaces joined through linkemud over veth
pairs, and the machine plumbing it needs (hugepages, CPU pinning, receive
interrupts/RPS, processes, run-time paths). Standard library only."""
