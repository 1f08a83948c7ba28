# shellcheck shell=bash
# Helpers shared by the scripts in scripts/ (sourced, not run).

# Prints a section header.
shoal_section() {
  printf '\n==== %s ====\n' "$*"
}

# Seconds as "1m05s" / "42s".
shoal_duration() {
  local s=$1
  if ((s >= 60)); then printf '%dm%02ds' $((s / 60)) $((s % 60)); else printf '%ds' "$s"; fi
}

# Runs "$@", then prints how long it took. Fails (returns the command's status) when it fails.
shoal_timed() {
  local start=$SECONDS rc=0
  "$@" || rc=$?
  printf -- '---- %s (%s)\n' "$([[ $rc -eq 0 ]] && echo "done" || echo "FAILED with status $rc")" \
    "$(shoal_duration $((SECONDS - start)))"
  return "$rc"
}

# Finds nvcc through $CUDACXX, on the PATH, or in /usr/local/cuda/bin, sets SHOAL_NVCC to it and
# puts its folder on the PATH so CMake finds it too. Returns 1 when there is none.
# (Call it directly, not in $(...): it must change this shell's PATH.)
shoal_find_nvcc() {
  SHOAL_NVCC=""
  if [[ -n "${CUDACXX:-}" && -x "${CUDACXX}" ]]; then
    SHOAL_NVCC=$CUDACXX
  elif command -v nvcc >/dev/null 2>&1; then
    SHOAL_NVCC=$(command -v nvcc)
  elif [[ -x /usr/local/cuda/bin/nvcc ]]; then
    SHOAL_NVCC=/usr/local/cuda/bin/nvcc
  fi
  [[ -n "$SHOAL_NVCC" ]] || return 1
  local dir
  dir=$(dirname "$SHOAL_NVCC")
  case ":$PATH:" in
    *":$dir:"*) ;;
    *) export PATH="$PATH:$dir" ;;
  esac
}

# True when an NVIDIA GPU is usable here (nvidia-smi lists at least one).
shoal_gpu_usable() {
  command -v nvidia-smi >/dev/null 2>&1 || return 1
  local list
  list=$(nvidia-smi -L 2>/dev/null) || return 1
  [[ "$list" == *GPU* ]]
}

# The --benchmark_min_time flag for `seconds`, in the form the Google Benchmark that `binary`
# links accepts: 1.7 (Debian 12) reads a plain number, later versions also take (and document)
# "0.05s". The binary is asked, with a run that lists its benchmarks and does nothing else.
shoal_min_time_flag() {
  local binary=$1 seconds=$2
  if "$binary" --benchmark_min_time="${seconds}s" --benchmark_list_tests >/dev/null 2>&1; then
    echo "--benchmark_min_time=${seconds}s"
  else
    echo "--benchmark_min_time=${seconds}"
  fi
}
