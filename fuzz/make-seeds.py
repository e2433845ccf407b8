#!/usr/bin/env python3
"""Writes the committed seed corpus: fuzz/corpus/<target>/seed-<name>.

Each seed is a scenario written out by hand (below), encoded the way the
targets decode their input (`ops` with the `arbitrary` crate's derives;
`schedule` with `schedule::decode`, whose documentation gives its layout,
built on the same primitives), so that the seeds
say what they exercise instead of being opaque fuzzer output. `cargo test`
in fuzz/ replays them (tests/replay_seeds.rs), and `cargo fuzz fmt <target>
<file>` prints one decoded. Rerun this script when an input type changes.

Encoding (arbitrary 1.x): an enum is a little-endian u32 `v` choosing variant
`(v * variants) >> 32`, then its fields; a bool is one byte (odd = true); a
u8 is one byte; an `Option` is a bool then the value; a collection is, per
element, a byte 0x01 then the element, ended by a byte 0x00 (or by the end
of the input for the last field of a target's input).
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def variant(index, count):
    value = ((2 * index + 1) << 32) // (2 * count)
    assert (value * count) >> 32 == index
    return value.to_bytes(4, "little")


def boolean(value):
    return bytes([1 if value else 0])


def byte(value):
    return bytes([value])


def option_byte(value):
    return boolean(False) if value is None else boolean(True) + byte(value)


def collection(elements, last_field=False):
    encoded = b"".join(b"\x01" + element for element in elements)
    return encoded if last_field else encoded + b"\x00"


# ops: chase_lev_fuzz::ops::OpsInput
TASK_KINDS = ["Word", "OddSized", "Boxed", "ZeroSized"]
CONSTRUCTORS = ["NewLifo", "NewFifo", "WithCapacity", "FifoWithCapacity", "LifoBounded", "FifoBounded"]
OPERATIONS = {  # name -> fields, in declaration order
    "Push": ["worker"],
    "TryPush": ["worker"],
    "PushMany": ["worker", "count"],
    "Pop": ["worker"],
    "PopMany": ["worker", "count"],
    "Churn": ["worker", "count"],
    "StealOne": ["stealer"],
    "StealBatch": ["stealer", "dest", "limit"],
    "StealBatchAndPop": ["stealer", "dest", "limit"],
    "NewStealer": ["worker"],
    "CloneStealer": ["stealer"],
    "DropStealer": ["stealer"],
    "DropWorker": ["worker"],
    "InjectorPush": [],
    "InjectorPushMany": ["count"],
    "InjectorSteal": [],
    "InjectorStealBatch": ["dest", "limit"],
    "InjectorStealBatchAndPop": ["dest", "limit"],
    "DropInjector": [],
}


def constructor(name, capacity=None):
    encoded = variant(CONSTRUCTORS.index(name), len(CONSTRUCTORS))
    return encoded if capacity is None else encoded + byte(capacity)


def operation(name, *values):
    fields = OPERATIONS[name]
    assert len(values) == len(fields), name
    encoded = variant(list(OPERATIONS).index(name), len(OPERATIONS))
    for field, value in zip(fields, values):
        encoded += option_byte(value) if field == "limit" else byte(value)
    return encoded


def ops_input(task_kind, first, more, operations):
    return (
        variant(TASK_KINDS.index(task_kind), len(TASK_KINDS))
        + first
        + collection(more)
        + collection(operations, last_field=True)
    )


# Worker and stealer arguments are indices among the live ones; every worker
# starts with one stealer, so stealer i is worker i's until one is dropped.
OPS_SEEDS = {
    # Grows from one slot, drains, then hovers at one task until the buffer
    # shrinks (with a task in it), then empties.
    "grow-then-shrink-lifo": ops_input("Word", constructor("WithCapacity", 1), [], [
        operation("PushMany", 0, 20),
        operation("PopMany", 0, 19),
        operation("Churn", 0, 12),
        operation("StealOne", 0),
        operation("Pop", 0),
    ]),
    # The same for a FIFO owner with heap tasks and an odd starting capacity.
    "grow-then-shrink-fifo-boxed": ops_input("Boxed", constructor("FifoWithCapacity", 3), [], [
        operation("PushMany", 0, 40),
        operation("StealOne", 0),
        operation("PopMany", 0, 37),
        operation("Churn", 0, 30),
        operation("PopMany", 0, 3),
    ]),
    # Batch steals with and without limits into a bounded worker until it is
    # full, then into a growable one that must grow.
    "batches-into-bounded-and-growable": ops_input("OddSized", constructor("NewLifo"),
        [constructor("LifoBounded", 3), constructor("FifoWithCapacity", 0)], [
        operation("PushMany", 0, 50),
        operation("StealBatch", 0, 1, None),
        operation("StealBatchAndPop", 0, 1, 2),
        operation("StealBatch", 0, 1, 7),
        operation("StealBatchAndPop", 0, 1, None),
        operation("StealBatch", 0, 2, 5),
        operation("StealBatchAndPop", 0, 2, None),
        operation("PopMany", 1, 4),
        operation("StealBatch", 2, 1, None),
    ]),
    # Batch steals whose destination is the victim itself, then a worker
    # dropped while its stealers still hold the deque and its tasks.
    "self-batches-and-orphaned-stealers": ops_input("Boxed", constructor("NewFifo"), [], [
        operation("PushMany", 0, 9),
        operation("StealBatch", 0, 0, None),
        operation("StealBatchAndPop", 0, 0, 3),
        operation("NewStealer", 0),
        operation("CloneStealer", 1),
        operation("DropWorker", 0),
        operation("StealOne", 2),
        operation("DropStealer", 0),
        operation("StealOne", 0),
        operation("DropStealer", 1),
    ]),
    # Bounded workers of odd bounds and of bound 1: try_push refused, push on
    # a full one, pops and steals at the bound.
    "bounded-at-the-bound": ops_input("Word", constructor("FifoBounded", 5),
        [constructor("LifoBounded", 1)], [
        operation("PushMany", 0, 7),
        operation("TryPush", 0),
        operation("Push", 1),
        operation("TryPush", 1),
        operation("StealBatchAndPop", 0, 1, None),
        operation("Pop", 1),
        operation("StealBatch", 0, 1, 1),
        operation("Pop", 0),
        operation("StealOne", 1),
        operation("Churn", 0, 9),
    ]),
    # Zero-sized tasks: the largest buffer, counting only.
    "zero-sized-tasks": ops_input("ZeroSized", constructor("WithCapacity", 0),
        [constructor("FifoBounded", 2)], [
        operation("PushMany", 0, 100),
        operation("StealBatch", 0, 1, None),
        operation("StealBatchAndPop", 0, 1, None),
        operation("PopMany", 0, 60),
        operation("StealOne", 0),
    ]),
    # The injector across block ends (63 tasks a block): batches into a
    # LIFO worker, a bounded FIFO one until full, single steals at the block
    # end, and a drop with tasks in two blocks.
    "injector-across-blocks": ops_input("Boxed", constructor("NewLifo"),
        [constructor("FifoBounded", 5)], [
        operation("InjectorPushMany", 130),
        operation("InjectorStealBatch", 0, None),
        operation("InjectorStealBatchAndPop", 1, 3),
        operation("InjectorStealBatch", 1, None),
        operation("InjectorStealBatch", 1, 1),
        operation("InjectorStealBatchAndPop", 1, None),
        operation("PopMany", 0, 40),
        operation("InjectorStealBatch", 0, 200),
        operation("InjectorSteal"),
        operation("InjectorPushMany", 40),
        operation("DropInjector"),
        operation("InjectorPush"),
        operation("InjectorStealBatchAndPop", 0, None),
    ]),
}

# schedule: chase_lev_fuzz::schedule::ScheduleInput, a scenario of the tests
# package's language (chase_lev_tests::scenario) read by schedule::decode
# with schedule::SHAPE, then the scheduling choices.
MOST_OWNER_ACTIONS = 12
MOST_THIEF_ACTIONS = 4
THIEF_ACTIONS = ["Steal", "StealBatch", "StealBatchAndPop"]


def bounded_list(elements, most):
    # Like collection(), but a list that reaches its most elements has no end byte.
    assert len(elements) <= most
    encoded = b"".join(b"\x01" + element for element in elements)
    return encoded if len(elements) == most else encoded + b"\x00"


def owner_action(name):
    return byte(["Push", "Pop"].index(name))


def thief_action(name, limit=None):
    encoded = byte(THIEF_ACTIONS.index(name))
    return encoded if name == "Steal" else encoded + option_byte(limit)


def destination(fifo, bounded, capacity):
    return boolean(fifo) + boolean(bounded) + byte(capacity - 1)


def round_(owner, thieves):
    # thieves: one list of actions per thief
    return bounded_list(owner, MOST_OWNER_ACTIONS) + b"".join(
        bounded_list(actions, MOST_THIEF_ACTIONS) for actions in thieves)


def schedule_input(fifo, bounded, capacity, initial_tasks, destinations, rounds, choices):
    # capacity is read as 1 + byte % 8, a destination's as 1 + byte % 4, the
    # thieves (one destination each) as 1 + byte % 2, the rounds as 1 + byte % 2.
    assert 1 <= capacity <= 8 and initial_tasks <= 8
    assert 1 <= len(destinations) <= 2 and 1 <= len(rounds) <= 2
    return (
        boolean(fifo) + boolean(bounded) + byte(capacity - 1) + byte(initial_tasks)
        + byte(len(destinations) - 1) + b"".join(destinations)
        + byte(len(rounds) - 1) + b"".join(rounds) + bytes(choices)
    )


GROWABLE_LIFO_1 = destination(False, False, 1)

# Choices: at each point where more than one thread can run, the next byte
# picks one (modulo how many); after the last byte nobody is preempted.
ALTERNATE = [0, 1] * 24
SCHEDULE_SEEDS = {
    # The owner pops the last task while a thief steals it.
    "last-task-race": schedule_input(False, False, 1, 1, [GROWABLE_LIFO_1],
        [round_([owner_action("Pop")], [[thief_action("Steal")]])], [1, 0, 1, 0, 0, 1, 1, 0]),
    # The owner grows the buffer while a thief holds the old one.
    "grow-while-stealing": schedule_input(False, False, 1, 1, [GROWABLE_LIFO_1],
        [round_([owner_action("Push")] * 5, [[thief_action("Steal"), thief_action("StealBatchAndPop", 3)]])],
        ALTERNATE),
    # A FIFO owner's pops race a batch claim of the oldest half.
    "fifo-batch-against-pops": schedule_input(True, False, 8, 6, [destination(True, False, 3)],
        [round_([owner_action("Pop"), owner_action("Pop"), owner_action("Push")],
                [[thief_action("StealBatch"), thief_action("Steal")]])],
        [1, 1, 0, 1, 0, 0, 1, 0, 1, 1, 0, 0] * 3),
    # Two thieves and a bounded owner at its bound; one thief's batches go
    # into a bounded FIFO destination of one slot.
    "two-thieves-bounded": schedule_input(False, True, 2, 2, [GROWABLE_LIFO_1, destination(True, True, 1)],
        [round_([owner_action("Pop"), owner_action("Push"), owner_action("Push")],
                [[thief_action("Steal"), thief_action("Steal")],
                 [thief_action("StealBatchAndPop", 2), thief_action("StealBatch", 1)]])],
        [2, 1, 0, 2, 1, 1, 0, 0, 2, 2, 1, 0] * 3),
    # The owner drains a grown buffer (shrinking it) while a thief steals.
    "shrink-while-stealing": schedule_input(False, False, 1, 8, [destination(False, False, 4)],
        [round_([owner_action("Pop")] * 8,
                [[thief_action("Steal"), thief_action("StealBatch", 2), thief_action("Steal")]])],
        [0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 0, 1] * 4),
    # Two rounds: the owner grows the buffer while one thief steals, then
    # (after the join) shrinks it while two thieves batch into LIFO
    # destinations.
    "grow-then-shrink-over-two-rounds": schedule_input(False, False, 1, 2,
        [destination(False, False, 2), destination(False, True, 2)],
        [round_([owner_action("Push")] * 10, [[thief_action("Steal")] * 2, []]),
         round_([owner_action("Pop")] * 10,
                [[thief_action("StealBatch", None), thief_action("Steal")],
                 [thief_action("StealBatchAndPop", 2), thief_action("StealBatch", 1)]])],
        [0, 1, 0, 0, 2, 1, 1, 0, 2, 0] * 5),
}


def write(target, seeds):
    directory = os.path.join(HERE, "corpus", target)
    os.makedirs(directory, exist_ok=True)
    for name, data in seeds.items():
        with open(os.path.join(directory, "seed-" + name), "wb") as seed:
            seed.write(data)
        print(f"{target}/seed-{name}: {len(data)} bytes")


write("ops", OPS_SEEDS)
write("schedule", SCHEDULE_SEEDS)
