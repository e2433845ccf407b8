//! What each mutant removes, and why the algorithm needs it: the text the
//! fence lab prints after the counterexample.

use crate::Mutant;

/// The fence lab's text for one mutant.
#[derive(Clone, Copy, Debug)]
pub struct Lesson {
    /// What the mutant changes, in one line.
    pub change: &'static str,
    /// The litmus shape the correct ordering forbids.
    pub litmus: &'static str,
    /// One paragraph: why the correct ordering forbids the counterexample.
    pub why: &'static str,
}

/// The lesson of `mutant`.
pub fn lesson(mutant: Mutant) -> Lesson {
    match mutant {
        Mutant::TakeFence => Lesson {
            change: "the owner's pop loses its seq_cst fence between `bottom := b - 1` and the load of `top`",
            litmus: "store buffering (SB)",
            why: "The owner writes bottom and then reads top; a thief reads top, then bottom, and writes top \
                  with its CAS. Each side writes one variable and reads the other: the store-buffering shape. \
                  Without fences, each thread's load may miss the other's store (on x86 the owner's store of \
                  bottom waits in its store buffer while its load of top goes ahead), so the owner believes \
                  more than one task is left and takes the bottom one without a CAS, while the thief, which \
                  still sees the old bottom, claims the same task with its CAS. The two seq_cst fences are \
                  totally ordered: whichever comes second must see the store made before the first one. So \
                  either the owner sees the thief's CAS of top (and takes the last task with a CAS, which only \
                  one side can win) or the thief sees the lowered bottom (and backs off). The fence in pop \
                  is what makes that \"either\" true; with it gone, both can miss each other and the task is \
                  taken twice.",
        },
        Mutant::StealFence => Lesson {
            change: "a thief loses its seq_cst fence between its loads of `top` and `bottom`",
            litmus: "store buffering (SB), the thief's side",
            why: "Store buffering needs a fence on both sides: the owner's fence alone does not stop the \
                  thief from reading an old bottom after a newer top. A thief that read top = t (written by \
                  its own or another thief's CAS) and then an old bottom thinks a task remains that the owner \
                  has already taken without a CAS. With the fence, the two fences are ordered: if the \
                  owner's comes first the thief sees its lowered bottom, and if the thief's comes first the \
                  owner sees the top the thief had read, and uses the CAS.",
        },
        Mutant::PushFence => Lesson {
            change: "push loses the release fence before `bottom := b + 1`",
            litmus: "message passing (MP)",
            why: "Push writes the task into its slot and then publishes it by raising bottom. A thief that \
                  reads the new bottom with acquire must also see the slot's bytes: that is message passing, \
                  and it needs release on the publishing side. Without the fence, the thief can read the new \
                  bottom and still read the slot's old contents (zeroes here: task 0, or an older task).",
        },
        Mutant::PushTopAcquire => Lesson {
            change: "push loads `top` relaxed instead of acquire",
            litmus: "load buffering (LB), in a wrapping ring only",
            why: "In Lê et al.'s ring the acquire orders a thief's read of a slot (made before its CAS) \
                  before the owner's overwrite of that slot after wrapping around; breaking it needs the \
                  thief's read to return a value from its own future, load buffering, which neither loom \
                  nor miri produce (proofs-notes/model.md#load-buffering). This deque's buffers never wrap, \
                  so the acquire protects nothing here: the value of top only decides fullness and where a \
                  new lap starts, and a stale value is always possible and harmless \
                  (proofs-notes/obligations.md#push-top-acquire).",
        },
        Mutant::StealTopAcquire => Lesson {
            change: "a thief loads `top` relaxed instead of acquire",
            litmus: "message passing through a fence",
            why: "The seq_cst fence that immediately follows the load is also an acquire fence, and a relaxed \
                  load followed by an acquire fence synchronises with the same release as an acquire load. \
                  So this weakening is expected to be safe (proofs-notes/obligations.md#steal-top-acquire).",
        },
        Mutant::StealBottomAcquire => Lesson {
            change: "a thief loads `bottom` relaxed instead of acquire",
            litmus: "message passing (MP)",
            why: "The acquire load of bottom is the receiving half of push's message passing: without it the \
                  thief can see the new bottom but not the task written before it, and takes zeroes.",
        },
        Mutant::BufferPublishRelease => Lesson {
            change: "a new buffer is published with a relaxed store instead of release",
            litmus: "message passing (MP) of the buffer's contents",
            why: "Growing copies the tasks into a new buffer and then stores its pointer. A thief that loads \
                  the new pointer must see the copies; with a relaxed store it can see the pointer and read \
                  a slot that still holds zeroes: an uninitialised read, the bug found in the C11 code.",
        },
        Mutant::BufferLoadAcquire => Lesson {
            change: "a thief loads the buffer pointer relaxed instead of acquire",
            litmus: "message passing (MP) of the buffer's contents",
            why: "The receiving half of the buffer publication: a relaxed load of the pointer does not make \
                  the copied slots visible, so the thief can read zeroes from the new buffer.",
        },
        Mutant::StealCasSeqCst => Lesson {
            change: "a thief's CAS on `top` succeeds with Relaxed instead of SeqCst",
            litmus: "load buffering (LB) in a wrapping ring; write-to-read causality",
            why: "Atomicity still lets only one CAS win each index. In a wrapping ring the lost release \
                  would let the owner overwrite a slot the thief is still reading (load buffering). Here \
                  buffers never wrap, and a thief that reads the top this CAS wrote still sees the pushes \
                  before the steal, through the two seq_cst fences (C++20 fence rule), which the scenario \
                  thief_that_sees_another_thiefs_steal_sees_the_push_before_it confirms \
                  (proofs-notes/obligations.md#steal-cas-seqcst).",
        },
        Mutant::TakeCasSeqCst => Lesson {
            change: "the owner's last-element CAS succeeds with Relaxed instead of SeqCst",
            litmus: "atomicity of read-modify-write",
            why: "The race for the last task is decided by which CAS on top wins, whatever the orderings. The \
                  argument that nothing else depends on it is in proofs-notes/obligations.md#take-cas-seqcst.",
        },
        Mutant::FifoCasSeqCst => Lesson {
            change: "the FIFO owner's pop CAS succeeds with Relaxed instead of SeqCst",
            litmus: "write-to-read causality (WRC)",
            why: "Nothing is taken twice (the CAS still arbitrates), but a thief that reads the top written \
                  by the owner's pop no longer inherits what the owner had done before it: the push of \
                  task 2, made before the pop of task 1. The thief then reads an old bottom and reports \
                  Empty, though from its start the deque held [1], [1, 2], then [2]. The release half of the \
                  CAS, read by the thief's load of top and its fence (an acquire fence), makes the push \
                  happen before the thief's read of bottom (proofs-notes/model.md#write-to-read-causality).",
        },
        Mutant::NoReloadAfterGrow => Lesson {
            change: "after growing, the owner writes the task into the old buffer",
            litmus: "a logic error (no concurrency needed)",
            why: "The new buffer's slot is never written, so whoever takes that task reads zeroes: the second \
                  correction to the C11 code is that the owner reloads the buffer after a grow.",
        },
        Mutant::StealFromBottom => Lesson {
            change: "a thief takes the newest task (at `bottom - 1`) instead of the oldest",
            litmus: "a logic error",
            why: "Thieves and owner then claim from the same end with different protocols: the thief's CAS \
                  on top does not reserve the slot it reads, so the owner and the thief take the same task.",
        },
        Mutant::SkipLastCas => Lesson {
            change: "the owner takes the last task without the CAS that races thieves",
            litmus: "a logic error",
            why: "When one task is left, both the owner and a thief may have passed their checks; only the \
                  CAS on top decides who gets it. Without it both take the task.",
        },
        Mutant::ReadAfterCas => Lesson {
            change: "a thief reads its slot after its CAS instead of before",
            litmus: "none: safe now that buffers never wrap",
            why: "In Lê et al.'s ring the owner may reuse the slot as soon as the CAS moved top past it, \
                  so the read must come first. Here a buffer never wraps: once a thief's CAS claimed index \
                  t, no thread writes t's slot in that buffer again (the owner only rewrites an index it \
                  popped itself), and the buffer outlives the steal (the thief is pinned; the model builds \
                  keep retired buffers). So the order of read and CAS no longer matters \
                  (proofs-notes/obligations.md#read-after-cas).",
        },
        Mutant::BatchPublishFence => Lesson {
            change: "a batch steal publishes the destination's `bottom` without the release fence",
            litmus: "message passing (MP), into the destination",
            why: "A batch steal copies the stolen tasks into the destination's slots and then raises the \
                  destination's bottom, exactly as a push does; the destination's own thieves read that \
                  bottom with acquire and then the slots. Without the release fence a thief of the \
                  destination can see the new bottom and still not see the copied task: it reads a slot \
                  that, as far as it can tell, nobody wrote (proofs-notes/model.md#message-passing).",
        },
        Mutant::RetireFence => Lesson {
            change: "the owner loses its seq_cst fence between publishing a new buffer and reading the hazard slots",
            litmus: "store buffering (SB), between reclamation and a steal",
            why: "A thief writes the buffer it is about to read into its hazard slot, then (after the steal's \
                  fence) loads the buffer pointer again; the owner stores the new pointer, then reads the \
                  hazard slots to decide what it may free. Each side writes one location and reads the other: \
                  store buffering. With a fence on both sides one of them sees the other: the owner sees the \
                  hazard and keeps the buffer, or the thief sees the new pointer and never reads the old one. \
                  Without the owner's fence its read of the slots can miss the thief's announcement while the \
                  thief's second load still returns the old pointer: the owner frees a buffer the thief then \
                  reads (proofs-notes/reclamation.md#hazard-slots).",
        },
        Mutant::HazardProtectRelease => Lesson {
            change: "a thief announces its buffer with a relaxed store instead of release",
            litmus: "message passing (MP), from one steal's reads to the owner's free",
            why: "The owner may read a thief's newer announcement (of another buffer) instead of its clear. \
                  The release on the announcement is what then orders the thief's earlier reads of the old \
                  buffer before the owner's free, as the release on the clear does when the owner reads the \
                  clear itself (proofs-notes/reclamation.md#hazard-slots).",
        },
        Mutant::HazardClearRelease => Lesson {
            change: "a thief clears its hazard slot with a relaxed store instead of release",
            litmus: "message passing (MP), from the thief's reads to the owner's free",
            why: "The owner frees a buffer once its scan reads an empty slot. Only a release clear, read by \
                  the owner's acquire, makes the thief's reads of that buffer happen before the free; with a \
                  relaxed clear the free and the reads are unordered: a use after free \
                  (proofs-notes/reclamation.md#hazard-slots).",
        },
        Mutant::RecordPublishRelease => Lesson {
            change: "a new hazard record is pushed on the registry's list, and the list read, relaxed",
            litmus: "message passing (MP), publication of a record",
            why: "A thread's first steal pushes its record on a lock-free list with a CAS on the head; the \
                  owner's scan loads the head and walks the list. Release on the CAS and acquire on the load \
                  make the record's initialised fields visible to the scan; without them the scan may read \
                  the record's slot before its initialisation (proofs-notes/reclamation.md#records).",
        },
        Mutant::RecordHandoffRelease => Lesson {
            change: "a record is handed from an exited thread to the next one relaxed",
            litmus: "message passing (MP), the hand-over of a hazard slot",
            why: "When a thread exits, its record is freed (`in_use = false`, release) and a later thread \
                  takes it (CAS, acquire). The pair orders the old thread's last stores of the slot before \
                  the new thread's first announcement in the slot's order; without it an owner could read \
                  the old thread's clear after the new thread's announcement, and free a buffer the new \
                  thread reads (proofs-notes/reclamation.md#records).",
        },
        Mutant::HazardScanAcquire => Lesson {
            change: "the owner reads the hazard slots relaxed instead of acquire",
            litmus: "message passing (MP), the owner's side",
            why: "The partner of the thief's release clear: a relaxed read of the cleared slot does not \
                  synchronise with it, so the thief's reads of the buffer need not happen before the free \
                  (proofs-notes/reclamation.md#hazard-slots).",
        },
        Mutant::EmptyLookAtOne => Lesson {
            change: "the owner's look returns None when it shows one task, not only when it shows none",
            litmus: "a logic error",
            why: "The empty look may return None without a fence because top only grows: a stale top is \
                  smaller than the current one, so a look that shows no task proves that every index below \
                  bottom has been claimed. A look that shows one task proves nothing of the kind (the task \
                  may still be there, and here it is), so returning None from it reports an empty deque \
                  that holds a task the owner itself pushed.",
        },
        Mutant::CasOnlyPopSeqCst => Lesson {
            change: "the owner's CAS-only pop of the last task succeeds with Relaxed instead of SeqCst",
            litmus: "none: the CAS is arbitration, not ordering",
            why: "Owner and thieves claim index t by the same CAS of top from t to t + 1, and only one of \
                  them can succeed whatever its ordering. The slot the owner reads is its own write, so it \
                  needs no acquire; nobody reads a slot on the strength of this CAS, so it needs no release: \
                  a thief that reads the top it wrote reads bottom after its own fence, and every earlier \
                  lowering of bottom was followed by the pop's SeqCst fence, which C++20 orders before that \
                  thief's fence (proofs-notes/fast-paths.md#cas-only-pop-seqcst).",
        },
        Mutant::CasOnlyPopAtTwo => Lesson {
            change: "the owner takes the task at bottom - 1 with a CAS of top alone when its look shows two tasks",
            litmus: "a logic error",
            why: "A CAS of top from t to t + 1 claims index t. With exactly one task t = bottom - 1, so the \
                  index claimed is the slot read. With two tasks the owner reads the slot of bottom - 1 but \
                  claims index t = bottom - 2: bottom does not move, so the task it took is still in the \
                  deque for the next pop or a thief (taken twice), and the task at t is never taken (lost).",
        },
        Mutant::CasOnlyPopKeepsLostTask => Lesson {
            change: "the owner's CAS-only pop keeps the task even when its CAS of top fails",
            litmus: "a logic error",
            why: "The owner's look may be stale, and a thief that read the same top may CAS first: the CAS \
                  is the only thing that decides who has the last task. A failed CAS means a thief moved top \
                  to bottom and took it; an owner that returns the bytes it read anyway takes it a second time.",
        },
        Mutant::InjectorPushCasSeqCst => Lesson {
            change: "the injector's push claims its slot with a Relaxed CAS instead of SeqCst",
            litmus: "store buffering (SB) with a client that uses SeqCst accesses, no fence",
            why: "The claim's atomicity does not depend on it. Its SeqCst puts the push in the single total order, so that a steal whose SeqCst fence comes later sees it even when the client's own half of a handshake is a SeqCst load with no fence. Loom treats SeqCst loads and stores as acquire/release, so it cannot show that outcome; the argument is in proofs-notes/injector.md#injector-push-cas-seqcst.",
        },
        Mutant::InjectorTailIndexAcquire => Lesson {
            change: "a push loads the tail index relaxed instead of acquire",
            litmus: "message passing (MP) of the new block pointer",
            why: "The thread that moves the tail to a new block moves the block pointer and then the new lap's index (release CASes). A push that reads that index relaxed may still load the old block pointer and write its task into the old block's slot of the same offset, a slot that belongs to another task.",
        },
        Mutant::InjectorTailPublishRelease => Lesson {
            change: "the thread moving the tail to a new block moves the new lap's tail index with a relaxed CAS instead of release",
            litmus: "message passing (MP) of the new block pointer",
            why: "The sending half of the same message: without release, a push that reads the new index with acquire does not see the new block pointer and writes into the old block.",
        },
        Mutant::InjectorNextRelease => Lesson {
            change: "the thread that links a new block does it with a relaxed CAS instead of release",
            litmus: "message passing (MP) of a new block's initial state",
            why: "Whoever moves a cursor into the new block follows this link and then uses the block (its slots, its lap). Without release it is not ordered after the block's allocation and initialisation.",
        },
        Mutant::InjectorWriteRelease => Lesson {
            change: "a push marks its slot written with a relaxed CAS instead of release",
            litmus: "message passing (MP)",
            why: "The steal checks the WRITE bit and then reads the task: the release CAS is what makes the task's bytes visible with the bit, so without it the steal reads a slot whose write it has not seen.",
        },
        Mutant::InjectorHeadIndexAcquire => Lesson {
            change: "a steal loads the head index relaxed instead of acquire",
            litmus: "message passing (MP) of the new block pointer; write-to-read causality",
            why: "The thread that moves the head to a new block moves the block pointer and then the index (release CASes). A steal that reads that index relaxed may load the old block pointer and read the old block's slot for a position of the new one. The acquire also carries what earlier steals saw of the tail.",
        },
        Mutant::InjectorStealFence => Lesson {
            change: "a steal loses its SeqCst fence before its load of the tail index",
            litmus: "store buffering (SB)",
            why: "A client pushes and then, behind a SeqCst fence, reads a flag; another sets the flag and steals. Without the steal's fence both can miss the other's write: the pusher sees no flag and the steal loads an old tail and reports Empty, a lost wake-up in a scheduler.",
        },
        Mutant::InjectorHeadCasSeqCst => Lesson {
            change: "a steal's CAS on the head index succeeds with Relaxed instead of SeqCst",
            litmus: "write-to-read causality (WRC)",
            why: "The CAS still lets only one steal claim each position. Its release half hands what the stealer saw of the tail to a steal that reads this head: without it, a steal can see that another steal took task 1 and still load the tail from before task 2, and report Empty.",
        },
        Mutant::InjectorNextAcquire => Lesson {
            change: "the thread that moves a cursor loads the link to the next block relaxed instead of acquire",
            litmus: "message passing (MP) of a new block's initial state",
            why: "The receiving half of the link's publication: without acquire the thread may use the new block before its allocation is visible to it.",
        },
        Mutant::InjectorHeadPublishRelease => Lesson {
            change: "the thread moving the head to a new block moves the new lap's head index with a relaxed CAS instead of release",
            litmus: "message passing (MP) of the new block pointer",
            why: "A steal that reads the new lap's head index with acquire must also read the new block pointer; without release it may read the old one and take a slot of the old block for a position of the new one.",
        },
        Mutant::InjectorWriteAcquire => Lesson {
            change: "a steal checks its slot's WRITE bit with a relaxed load instead of acquire",
            litmus: "message passing (MP)",
            why: "The receiving half of the task's publication: the steal can see the bit and still not see the task's bytes.",
        },
        Mutant::InjectorReadDoneRelease => Lesson {
            change: "a steal marks its slot read with an acquire-only RMW instead of acquire-release",
            litmus: "message passing (MP) of 'done with the block' to the freer",
            why: "The thread that frees the block reads the READ bit with acquire: only a release mark orders the steal's read of its slot before the free.",
        },
        Mutant::InjectorDestroyAcquire => Lesson {
            change: "the freer checks the other slots relaxed instead of acquire",
            litmus: "message passing (MP) of 'done with the block' to the freer",
            why: "The receiving half: a relaxed check of the READ bit does not order the reader's last access to its slot before the free.",
        },
        Mutant::InjectorBlockPointerAcqRel => Lesson {
            change: "the head's and tail's block words are loaded relaxed, and moved to the next block with an acquire-only CAS",
            litmus: "message passing (MP) of a new block to its helpers",
            why: "A helper takes its ticket on a cursor's new block with an acquire CAS on the block word and reads the block's lap; only the release of the CAS that moved the word there orders the lap's write (by the thread that linked the block) before that read (proofs-notes/injector.md#injector-block-pointer-acqrel).",
        },
        Mutant::InjectorTicketAcquire => Lesson {
            change: "a helper takes its ticket on a cursor's block with a relaxed CAS instead of acquire",
            litmus: "message passing (MP) of a new block to its helpers",
            why: "The ticket CAS reads the block word stored by the thread that moved the cursor to the block; only its acquire makes the block's initialisation (its lap) visible to the helper that reads it next (proofs-notes/injector.md#tickets).",
        },
        Mutant::InjectorTicketRelease => Lesson {
            change: "a helper gives its ticket back with a relaxed CAS instead of release",
            litmus: "message passing (MP) of 'done with the block' to the freer",
            why: "The helper read the block (its lap, its link) while holding the ticket; the thread that later moves the cursor off the block acquires the ticket count, and only a release return orders the helper's reads before the block's free (proofs-notes/injector.md#tickets).",
        },
        Mutant::InjectorCursorCasAcquire => Lesson {
            change: "the CAS that moves a cursor to the next block is release-only instead of acquire-release",
            litmus: "message passing (MP) of 'done with the block' to the freer",
            why: "The receiving half of a ticket's return: the CAS that moves the cursor reads the count the helpers gave back; without acquire, their reads of the block are not ordered before its free (proofs-notes/injector.md#tickets).",
        },
        Mutant::InjectorShareAcqRel => Lesson {
            change: "the RMWs on a block's ticket counts and shares are relaxed instead of acquire-release",
            litmus: "message passing (MP) of 'done with the block' to the freer",
            why: "A block is freed by whoever releases the last of its three shares (its slots, its tail tickets, its head tickets); each release must carry what its holders did with the block to the thread that frees it (proofs-notes/injector.md#reclamation).",
        },
    }
}
