#!/usr/bin/env python3
"""Locked instructions executed, from a callgrind profile made with
--dump-instr=yes (with or without --dump-line): the sum of the execution counts of every
instruction of the binary that x86 executes as a locked read-modify-write or
a full barrier (a `lock` prefix, `xchg` with memory, `mfence`).

Usage: locked_instructions.py CALLGRIND_OUT BINARY
Prints one number. Callgrind reports run-time addresses; the offset to the
binary's own addresses is found from the symbols both name.
"""
import re
import subprocess
import sys


def locked_addresses(binary):
    """File addresses of the locked instructions, and function start addresses."""
    dump = subprocess.run(
        ["objdump", "-d", "-C", "--no-show-raw-insn", "-M", "intel", binary],
        check=True, capture_output=True, text=True).stdout
    locked, symbols, instructions = set(), {}, set()
    for line in dump.splitlines():
        symbol = re.match(r"^([0-9a-f]+) <(.+)>:$", line)
        if symbol:
            symbols.setdefault(symbol.group(2), []).append(int(symbol.group(1), 16))
            continue
        instruction = re.match(r"^\s+([0-9a-f]+):\s+(.*)$", line)
        if not instruction:
            continue
        instructions.add(int(instruction.group(1), 16))
        text = instruction.group(2).strip()
        if text.startswith("lock ") or text.startswith("mfence") or (
                text.startswith("xchg") and "PTR" in text):
            locked.add(int(instruction.group(1), 16))
    return locked, symbols, instructions


def instruction_counts(profile):
    """Self cost per run-time address, and the first address of each function."""
    counts, starts = {}, {}
    names = {}
    position = 0
    function = None
    skip_next = False
    # Position fields before the costs: the address, and the source line
    # with --dump-line=yes ("positions: instr line").
    positions = 1
    with open(profile) as lines:
        for line in lines:
            line = line.rstrip("\n")
            if line.startswith("positions:"):
                positions = len(line.split()) - 1
                continue
            if line.startswith("cfn="):
                match = re.match(r"cfn=\((\d+)\)(?: (.*))?", line)
                if match.group(2):
                    names[match.group(1)] = match.group(2)
                continue
            if line.startswith("fn="):
                match = re.match(r"fn=\((\d+)\)(?: (.*))?", line)
                if match.group(2):
                    names[match.group(1)] = match.group(2)
                function = names.get(match.group(1))
                continue
            if line.startswith("calls="):
                skip_next = True  # the next cost line is the call's inclusive cost
                continue
            if not line or not (line[0] in "+-*" or line.startswith("0x")):
                continue
            fields = line.split()
            where = fields[0]
            if where.startswith("0x"):
                position = int(where, 16)
            elif where.startswith("+"):
                position += int(where[1:], 16 if where[1:].startswith("0x") else 10)
            elif where.startswith("-"):
                position -= int(where[1:], 16 if where[1:].startswith("0x") else 10)
            if skip_next:
                skip_next = False
                continue
            cost = int(fields[positions]) if len(fields) > positions else 0
            counts[position] = counts.get(position, 0) + cost
            if function is not None:
                starts[function] = min(starts.get(function, position), position)
    return counts, starts


def main():
    profile, binary = sys.argv[1], sys.argv[2]
    locked, symbols, instructions = locked_addresses(binary)
    counts, starts = instruction_counts(profile)
    # The load offset (0 when callgrind reports the binary's own addresses):
    # among the offsets that put a counted function's first address on a
    # symbol of the same name, the one that makes the most counted addresses
    # instruction starts of the binary.
    candidates = {0}
    for name, start in starts.items():
        for address in symbols.get(name, []):
            candidates.add(start - address)

    def fit(offset):
        return sum(1 for address in counts if address - offset in instructions)

    offset = max(sorted(candidates), key=fit)
    if fit(offset) == 0:
        sys.exit("locked_instructions.py: the profile's addresses are not the binary's")
    print(sum(count for address, count in counts.items() if address - offset in locked))


if __name__ == "__main__":
    main()
