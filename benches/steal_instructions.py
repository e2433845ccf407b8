#!/usr/bin/env python3
"""Every instruction a callgrind profile counted inside the measured
function, in address order, with its executions per operation, its source
line (objdump -l: the innermost inlined function's file and line) and
whether x86 executes it locked. For reading where a steal spends its
instructions (benches/steal_breakdown.sh).

Usage: steal_instructions.py CALLGRIND_OUT BINARY OPERATIONS
The profile must come from --dump-instr=yes (see locked_instructions.py).
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from locked_instructions import instruction_counts, locked_addresses  # noqa: E402


def disassembly(binary):
    """address -> (function, source line, instruction text)."""
    dump = subprocess.run(
        ["objdump", "-d", "-l", "-C", "--no-show-raw-insn", "-M", "intel", binary],
        check=True, capture_output=True, text=True).stdout
    found, function, source = {}, None, None
    for line in dump.splitlines():
        symbol = re.match(r"^([0-9a-f]+) <(.+)>:$", line)
        if symbol:
            function, source = symbol.group(2), None
            continue
        where = re.match(r"^(/.*|[^\s].*):(\d+)(?: \(discriminator \d+\))?$", line)
        if where:
            path = where.group(1)
            for marker in ("/library/", "/registry/src/", "/deque/"):
                if marker in path:
                    path = path[path.index(marker) + 1:]
            source = f"{path}:{where.group(2)}"
            continue
        instruction = re.match(r"^\s+([0-9a-f]+):\s+(.*)$", line)
        if instruction:
            found[int(instruction.group(1), 16)] = (function, source, instruction.group(2).strip())
    return found


def main():
    profile, binary, operations = sys.argv[1], sys.argv[2], int(sys.argv[3])
    locked, symbols, instructions = locked_addresses(binary)
    counts, starts = instruction_counts(profile)
    candidates = {0}
    for name, start in starts.items():
        for address in symbols.get(name, []):
            candidates.add(start - address)
    offset = max(sorted(candidates),
                 key=lambda o: sum(1 for a in counts if a - o in instructions))
    listing = disassembly(binary)
    total = 0
    last_function = None
    for address in sorted(counts):
        count = counts[address]
        if count == 0:
            continue
        function, source, text = listing.get(address - offset, ("?", "?", "?"))
        if function != last_function:
            print(f"--- {function}")
            last_function = function
        mark = "L" if address - offset in locked else " "
        total += count
        print(f"{count / operations:6.2f} {mark} {address - offset:8x}  {text:<48} {source}")
    print(f"{total / operations:6.2f}   instructions per operation in all")


if __name__ == "__main__":
    main()
