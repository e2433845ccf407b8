# The libFuzzer and sanitizer options of fuzz/run.sh and fuzz/planted-bug.sh,
# kept in one place so that the planted-bug demonstration measures exactly
# what CI runs. Sourced, not run; expects $fuzz_dir.
#
# Speed (measured on the 2-core machine, see fuzz/README.md):
# - -detect_leaks=0: crossbeam-epoch frees retired buffers during later
#   inputs, so an input that resizes a buffer ends with more allocations than
#   frees, and libFuzzer then runs LeakSanitizer over the whole heap: 12 times
#   slower. What leak detection would add is checked exactly by the
#   harnesses' drop log (every task dropped once). Runs with it on found no
#   leak.
# - detect_stack_use_after_return=0: AddressSanitizer's fake stacks are
#   garbage-collected at every switch between shuttle's coroutine stacks:
#   3 times slower for `schedule`. Safe Rust cannot return a pointer to a
#   dead stack frame, and the deque keeps none.
# Reach:
# - ops: -max_len=128 -len_control=0. The bulk operations (PushMany, PopMany,
#   Churn) reach large deques in a few bytes, so 128 bytes (about 20
#   operations) is plenty, and skipping libFuzzer's slow growth of the length
#   limit found the planted shrink bug in 6 to 29 s in 4 runs of 6 (the other
#   two took over 60 s), where the one run with length control took 59 s.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_stack_use_after_return=0"

# Sets the array `options` for target $1.
fuzz_options() {
  options=(-timeout=20 -detect_leaks=0)
  if [ -f "$fuzz_dir/$1.dict" ]; then
    options+=(-dict="$fuzz_dir/$1.dict")
  fi
  case $1 in
    ops) options+=(-max_len=128 -len_control=0) ;;
  esac
}
