//! The atomics and the fence the algorithm uses, each named where it is
//! made (`AtomicI64::new(0).named("top")`).
//!
//! In every build that ships they are the sync shim's (`sync.rs`: std's, or
//! loom's or shuttle's under a model checker), and a name costs nothing. In
//! the internal mutant builds (`--cfg chase_lev_mutants`) each is wrapped to
//! record its accesses, by that name, in the event log (`trace.rs`) from
//! which the fence lab draws its counterexamples.

/// The shim's atomics themselves.
#[cfg(not(chase_lev_mutants))]
pub(crate) use crate::sync::{fence, load_own_store, AtomicI64, AtomicPtr, AtomicU64, AtomicUsize};

/// The mutant builds' atomics record every access in the event log.
#[cfg(chase_lev_mutants)]
pub(crate) use logged::{fence, load_own_store, AtomicI64, AtomicPtr, AtomicU64, AtomicUsize};

/// A name for an atomic, given where it is made
/// (`AtomicI64::new(0).named("top")`): the mutant builds' event log calls
/// it by that name; elsewhere `named` returns the atomic as it is.
pub(crate) trait Named: Sized {
    /// This atomic, called `name` in the event log.
    fn named(self, name: &'static str) -> Self;

    /// As `named`, for a pointer whose bits under `tags` are a tag (the
    /// injector's ticket counts), which the log shows apart from the address.
    fn named_with_tags(self, name: &'static str, tags: usize) -> Self {
        let _ = tags;
        self.named(name)
    }
}

#[cfg(not(chase_lev_mutants))]
macro_rules! unnamed {
    ($($atomic:ty),*) => {$(
        impl Named for $atomic {
            fn named(self, _name: &'static str) -> Self {
                self
            }
        }
    )*};
}

#[cfg(not(chase_lev_mutants))]
unnamed!(AtomicI64, AtomicU64, AtomicUsize);

/// (GenMC build.) The hazard registry's 8-bit mask word, unnamed and, in
/// the mutant build, not logged (`reclamation.rs`, `MaskWord`).
#[cfg(chase_lev_genmc)]
impl Named for crate::sync::AtomicU8 {
    fn named(self, _name: &'static str) -> Self {
        self
    }
}

#[cfg(not(chase_lev_mutants))]
impl<T> Named for AtomicPtr<T> {
    fn named(self, _name: &'static str) -> Self {
        self
    }
}
/// (Mutant builds only.) The backend's atomics, each with its name, and
/// every access recorded in the event log (`trace.rs`) after it is made,
/// with the value it read or wrote. Recording is plain memory of the OS
/// thread, no operation of the model checker's, so a model explores the same
/// interleavings with the log on or off.
#[cfg(chase_lev_mutants)]
mod logged {
    use super::Named;
    use crate::sync::{self as backend, Ordering};
    use crate::trace::{self, Shower};

    /// An atomic of the backend, and its name. All zeroes is a valid one
    /// (an unnamed atomic holding 0), as the std build's zeroed injector
    /// blocks need.
    pub(crate) struct Logged<A> {
        atomic: A,
        name: Option<&'static str>,
        tags: usize,
        /// Which label of the log this atomic has (see `trace::Label`):
        /// kept in the atomic itself, so that a new atomic at the address
        /// of a freed one gets a label of its own.
        label: trace::Label,
    }

    pub(crate) type AtomicI64 = Logged<backend::AtomicI64>;
    pub(crate) type AtomicU64 = Logged<backend::AtomicU64>;
    pub(crate) type AtomicUsize = Logged<backend::AtomicUsize>;
    pub(crate) type AtomicPtr<T> = Logged<backend::AtomicPtr<T>>;

    impl<A> Named for Logged<A> {
        fn named(mut self, name: &'static str) -> Self {
            self.name = Some(name);
            self
        }

        fn named_with_tags(mut self, name: &'static str, tags: usize) -> Self {
            self.name = Some(name);
            self.tags = tags;
            self
        }
    }

    impl<A> Logged<A> {
        fn record(&self, event: impl FnOnce(&str, &mut Shower<'_>) -> String) {
            // With the log off, nothing of the atomic is read after its
            // operation: by then another thread may have freed the memory
            // it lives in (the CAS that hands an injector block to the
            // thread that destroys it). With the log on (the fence lab's
            // pictures) the name and label are still read here, after the
            // operation (proofs-notes/limits.md#miris-genmc-mode).
            if trace::enabled() {
                trace::access(self.name, &self.label, event);
            }
        }
    }

    /// How a value appears in the log.
    pub(crate) trait Shown: Copy {
        fn show(self, tags: usize, shower: &mut Shower<'_>) -> String;
    }

    macro_rules! shown_as_number {
        ($($value:ty),*) => {$(
            impl Shown for $value {
                fn show(self, _tags: usize, _shower: &mut Shower<'_>) -> String {
                    self.to_string()
                }
            }
        )*};
    }

    shown_as_number!(bool, i64, u64, usize);

    impl<T> Shown for *mut T {
        fn show(self, tags: usize, shower: &mut Shower<'_>) -> String {
            shower.pointer(self as usize, tags)
        }
    }

    /// `new`, `load`, `store`, `compare_exchange(_weak)` and `swap` of one
    /// backend atomic holding `$value`, recorded. Each forwards the caller's
    /// ordering unchanged.
    macro_rules! logged {
        ([$($generic:tt)*] $atomic:ty, $value:ty) => {
            // (Not every atomic uses every operation.)
            #[allow(dead_code)]
            impl<$($generic)*> Logged<$atomic> {
                #[cfg(not(any(chase_lev_loom, chase_lev_shuttle)))]
                pub(crate) const fn new(value: $value) -> Self {
                    Logged { atomic: <$atomic>::new(value), name: None, tags: 0, label: trace::Label::new() }
                }

                #[cfg(any(chase_lev_loom, chase_lev_shuttle))]
                pub(crate) fn new(value: $value) -> Self {
                    Logged { atomic: <$atomic>::new(value), name: None, tags: 0, label: trace::Label::new() }
                }

                pub(crate) fn load(&self, ordering: Ordering) -> $value {
                    // Ordering: the caller's, forwarded unchanged to the
                    // backend (proofs-notes/model.md#which-model).
                    let value = self.atomic.load(ordering);
                    self.record(|name, shower| {
                        format!("load {name} = {} ({ordering:?})", value.show(self.tags, shower))
                    });
                    value
                }

                pub(crate) fn store(&self, value: $value, ordering: Ordering) {
                    // Ordering: the caller's, forwarded unchanged to the
                    // backend (proofs-notes/model.md#which-model).
                    self.atomic.store(value, ordering);
                    self.record(|name, shower| {
                        format!("store {name} := {} ({ordering:?})", value.show(self.tags, shower))
                    });
                }

                pub(crate) fn swap(&self, value: $value, ordering: Ordering) -> $value {
                    // Ordering: the caller's, forwarded unchanged to the
                    // backend (proofs-notes/model.md#which-model).
                    let old = self.atomic.swap(value, ordering);
                    self.record(|name, shower| {
                        let old = old.show(self.tags, shower);
                        format!("swap {name} {old} -> {} ({ordering:?})", value.show(self.tags, shower))
                    });
                    old
                }

                pub(crate) fn compare_exchange(
                    &self,
                    current: $value,
                    new: $value,
                    success: Ordering,
                    failure: Ordering,
                ) -> Result<$value, $value> {
                    // Ordering: the caller's, forwarded unchanged to the
                    // backend (proofs-notes/model.md#which-model).
                    let result = self.atomic.compare_exchange(current, new, success, failure);
                    self.record_cas(current, new, result, success, failure);
                    result
                }

                pub(crate) fn compare_exchange_weak(
                    &self,
                    current: $value,
                    new: $value,
                    success: Ordering,
                    failure: Ordering,
                ) -> Result<$value, $value> {
                    // Ordering: the caller's, forwarded unchanged to the
                    // backend (proofs-notes/model.md#which-model).
                    let result = self.atomic.compare_exchange_weak(current, new, success, failure);
                    self.record_cas(current, new, result, success, failure);
                    result
                }

                fn record_cas(
                    &self,
                    current: $value,
                    new: $value,
                    result: Result<$value, $value>,
                    success: Ordering,
                    failure: Ordering,
                ) {
                    self.record(|name, shower| {
                        let current = current.show(self.tags, shower);
                        let new = new.show(self.tags, shower);
                        match result {
                            Ok(_) => format!("CAS {name} {current} -> {new} won ({success:?})"),
                            Err(now) => format!(
                                "CAS {name} {current} -> {new} lost, {name} = {} ({failure:?})",
                                now.show(self.tags, shower)
                            ),
                        }
                    });
                }
            }
        };
    }

    /// (GenMC build.) The atomic's initial store, as the backend's.
    #[cfg(chase_lev_genmc)]
    impl<A: backend::InitialValue> backend::InitialValue for Logged<A> {
        fn store_initial_value(&self) {
            self.atomic.store_initial_value();
        }
    }

    logged!([] backend::AtomicI64, i64);
    logged!([] backend::AtomicU64, u64);
    logged!([] backend::AtomicUsize, usize);
    logged!([T] backend::AtomicPtr<T>, *mut T);

    /// `fetch_add` and `fetch_or` of one backend integer atomic, recorded.
    macro_rules! logged_arithmetic {
        ($atomic:ty, $value:ty) => {
            #[allow(dead_code)]
            impl Logged<$atomic> {
                pub(crate) fn fetch_add(&self, value: $value, ordering: Ordering) -> $value {
                    // Ordering: the caller's, forwarded unchanged to the
                    // backend (proofs-notes/model.md#which-model).
                    let old = self.atomic.fetch_add(value, ordering);
                    self.record(|name, _| {
                        format!(
                            "fetch_add {name} {old} -> {} ({ordering:?})",
                            old.wrapping_add(value)
                        )
                    });
                    old
                }

                pub(crate) fn fetch_and(&self, value: $value, ordering: Ordering) -> $value {
                    // Ordering: the caller's, forwarded unchanged to the
                    // backend (proofs-notes/model.md#which-model).
                    let old = self.atomic.fetch_and(value, ordering);
                    self.record(|name, _| {
                        format!("fetch_and {name} {old} -> {} ({ordering:?})", old & value)
                    });
                    old
                }

                pub(crate) fn fetch_or(&self, value: $value, ordering: Ordering) -> $value {
                    // Ordering: the caller's, forwarded unchanged to the
                    // backend (proofs-notes/model.md#which-model).
                    let old = self.atomic.fetch_or(value, ordering);
                    self.record(|name, _| {
                        format!("fetch_or {name} {old} -> {} ({ordering:?})", old | value)
                    });
                    old
                }
            }
        };
    }

    logged_arithmetic!(backend::AtomicU64, u64);
    logged_arithmetic!(backend::AtomicUsize, usize);

    /// The shim's `load_own_store`, not recorded: the owner reading back its
    /// own store is no event of the algorithm's (and no scheduling point of
    /// loom's).
    ///
    /// # Safety
    /// As for `sync::load_own_store`.
    pub(crate) unsafe fn load_own_store(atomic: &AtomicI64) -> i64 {
        // SAFETY: forwarded from the caller.
        unsafe { backend::load_own_store(&atomic.atomic) }
    }

    /// The backend's fence, recorded.
    pub(crate) fn fence(ordering: Ordering) {
        // Ordering: the caller's, forwarded unchanged to the backend
        // (proofs-notes/model.md#which-model).
        backend::fence(ordering);
        trace::fence(ordering);
    }
}
