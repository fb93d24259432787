#!/usr/bin/env bash
# Installs what linkemu needs on a Debian 12 machine and prepares the host
# (hugepages, hugetlbfs, bpffs). Idempotent and quick when nothing is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(libdpdk-dev dpdk dpdk-dev meson ninja-build pkg-config gcc make
	      iproute2 iputils-ping iperf3 ethtool python3-pyelftools
	      python3 python3-venv procps   # venv: Debian's python3 has no ensurepip without it; procps: sysctl
	      clang libclang-rt-14-dev llvm bpftool libbpf-dev tcpdump netsniff-ng)   # clang & co: make fuzz, readable sanitizer
	      # stacks, lab lfp's BPF congestion controls; tcpdump: capture; netsniff-ng:
	      # trafgen, the small-packet generator of bench/bed_attach.py
HUGEPAGES_WANTED=${LINKEMU_HUGEPAGES:-1024}   # 2 MiB pages: 2 GiB
HUGEPAGE_SYSFS=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages

say() { printf '[setup] %s\n' "$*"; }

need_root() {
	if [ "$(id -u)" != 0 ]; then
		echo "setup: linkemu needs root (hugepages, namespaces, DPDK ports); run with sudo" >&2
		exit 1
	fi
}

install_debian_packages() {
	local missing=()
	for p in "${APT_PACKAGES[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return
	say "installing Debian packages: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

reserve_hugepages() {
	local have
	have=$(cat "$HUGEPAGE_SYSFS")
	if [ "$have" -lt "$HUGEPAGES_WANTED" ]; then
		say "reserving $HUGEPAGES_WANTED hugepages of 2 MiB (had $have)"
		echo "$HUGEPAGES_WANTED" > "$HUGEPAGE_SYSFS"
		have=$(cat "$HUGEPAGE_SYSFS")
		if [ "$have" -lt "$HUGEPAGES_WANTED" ]; then
			echo "setup: only $have of $HUGEPAGES_WANTED hugepages could be reserved (memory fragmented?)" >&2
			[ "$have" -ge 256 ] || exit 1
		fi
	fi
	mkdir -p /dev/hugepages
	mountpoint -q /dev/hugepages || { say "mounting hugetlbfs on /dev/hugepages"; mount -t hugetlbfs nodev /dev/hugepages; }
	# libxdp (net_af_xdp) prefers a bpffs; harmless without it, noisy logs.
	mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf 2>/dev/null || true
}

python_env() {
	# A project venv, so the machine's Python stays untouched.
	# A venv without pip is what `python3 -m venv` leaves when it fails
	# half-way (Debian without python3-venv: "ensurepip is not available"):
	# checking for bin/python alone kept that broken venv on every later run.
	if [ ! -x .venv/bin/python ] || ! .venv/bin/python -m pip --version >/dev/null 2>&1; then
		say "creating Python venv in .venv"
		python3 -m venv --clear .venv
		rm -f .venv/.installed
	fi
	if ! .venv/bin/python -c 'import linkemu, pytest' 2>/dev/null ||
	   [ ! -e .venv/.installed ] || [ pyproject.toml -nt .venv/.installed ]; then
		say "installing the linkemu Python package (editable) and its test tools"
		.venv/bin/python -m pip install -q --upgrade pip >/dev/null
		.venv/bin/python -m pip install -q -e '.[test]'
		touch .venv/.installed
	fi
}

need_root
install_debian_packages
reserve_hugepages
python_env
