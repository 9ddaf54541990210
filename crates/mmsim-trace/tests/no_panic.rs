//! Property test: whatever the bytes, every reader returns records or a
//! clear error — never a panic, never an endless stream.

use mmsim_trace::{Format, TraceReader};
use proptest::prelude::*;

fn drain(bytes: Vec<u8>, format: Format) {
    let Ok(mut r) = TraceReader::from_reader(
        "fuzz",
        Box::new(std::io::Cursor::new(bytes.clone())),
        format,
    ) else {
        return;
    };
    let mut out = Vec::new();
    let mut total = 0u64;
    loop {
        match r.read_batch(&mut out, 4096) {
            Ok(0) | Err(_) => break,
            Ok(n) => total += n as u64,
        }
        // ARC lines expand to at most 2^20 references each.
        assert!(total <= (bytes.len() as u64 + 1) << 20, "runaway reader");
    }
}

fn inputs() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..2048),
        // text-like: digits, spaces, newlines, stars, signs
        prop::collection::vec(
            prop::sample::select(b"0123456789 \n\r*-#x\t".to_vec()),
            0..2048
        ),
        // compressed-looking: a real magic followed by garbage
        (
            prop::sample::select(vec![
                vec![0x1f, 0x8b],
                vec![0xfd, b'7', b'z', b'X', b'Z', 0],
                vec![0x28, 0xb5, 0x2f, 0xfd]
            ]),
            prop::collection::vec(any::<u8>(), 0..512)
        )
            .prop_map(|(mut m, rest)| {
                m.extend(rest);
                m
            }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
    #[test]
    fn readers_never_panic(bytes in inputs()) {
        for format in [Format::Text, Format::Lirs, Format::Arc, Format::OracleGeneral] {
            drain(bytes.clone(), format);
        }
    }
}
