//! The `ops` dictionary names operations by their encoded selector; if
//! `Operation` changes, the entries would silently mean other operations.

use arbitrary::{Arbitrary, Unstructured};
use chase_lev_fuzz::ops::Operation;

/// `push_many_255` -> `PushMany`.
fn variant_name(key: &str) -> String {
    key.trim_end_matches("_255")
        .split('_')
        .map(|word| word[..1].to_uppercase() + &word[1..])
        .collect()
}

/// The bytes of a dictionary value written with `\xNN` escapes only.
fn unescape(value: &str) -> Vec<u8> {
    value
        .split("\\x")
        .skip(1)
        .map(|hex| u8::from_str_radix(hex, 16).expect("two hex digits"))
        .collect()
}

#[test]
fn every_ops_dictionary_entry_decodes_to_the_operation_it_is_named_after() {
    let dictionary = include_str!("../ops.dict");
    let mut entries = 0;
    for line in dictionary
        .lines()
        .filter(|line| !line.starts_with('#') && !line.is_empty())
    {
        let (key, value) = line.split_once('=').expect("key=\"value\"");
        let mut bytes = unescape(value.trim_matches('"'));
        assert_eq!(
            bytes.remove(0),
            1,
            "{key}: an element starts with the byte 0x01"
        );
        bytes.extend_from_slice(&[0; 8]); // fields the entry leaves out
        let operation = Operation::arbitrary(&mut Unstructured::new(&bytes)).expect("decodes");
        let debug = format!("{operation:?}");
        assert!(
            debug.starts_with(&variant_name(key)),
            "{key} decodes to {debug}"
        );
        entries += 1;
    }
    assert!(entries >= 13, "the dictionary lost entries");
}
