//! Fuzzes every field-constraint and format check with arbitrary text: each must be total
//! (no panic, whatever the bytes), since servers run them on every request's values and
//! `svc check` on every literal. The input is read as UTF-8 when it is (and lossily when
//! not), and its first byte picks the lengths the length checks are given.
//!
//! Run: `cargo +nightly fuzz run constraints -- -max_total_time=60` from `compiler/`.

#![no_main]

use libfuzzer_sys::fuzz_target;
use svc_types::TypeRef;
use svc_types::constraints::{Constraints, Format, check, literal_breaks};

fuzz_target!(|data: &[u8]| {
    let (lengths, rest) = data.split_first().map_or((0, data), |(b, rest)| (*b, rest));
    let lossy = String::from_utf8_lossy(rest);
    let texts = std::str::from_utf8(rest).into_iter().chain([lossy.as_ref()]);
    let (min, max) = (u64::from(lengths & 0x0f), u64::from(lengths >> 4));
    for text in texts {
        let _ = check::min_length(text, min);
        let _ = check::max_length(text, max);
        for &format in Format::ALL {
            let _ = format.matches(text);
            let constraints = Constraints {
                min_length: Some(min),
                max_length: Some(max),
                format: Some(format),
                ..Constraints::default()
            };
            let _ = constraints.check_string(text);
            let _ = literal_breaks(&TypeRef::String, &constraints, &serde_json::json!(text));
            let items = serde_json::json!([text, text]);
            let array = TypeRef::Array(Box::new(TypeRef::String));
            let _ = literal_breaks(&array, &constraints, &items);
        }
    }
});
