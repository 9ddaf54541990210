//! Native traces with dense keys (`NativeOptions::dense_keys`, header flag bit 1): written
//! numbered by first appearance, checked record by record when read, and replayed through
//! a `Densifier` with no table.

use mmsim_trace::native::{FLAG_DENSE_KEYS, HEADER_SIZE};
use mmsim_trace::{Densifier, Format, NativeOptions, NativeWriter, Record, TraceReader};

fn write(records: &[Record], dense_keys: bool) -> Vec<u8> {
    let options = NativeOptions {
        block_records: 3,
        dense_keys,
        ..NativeOptions::default()
    };
    let mut w = NativeWriter::with_options("n", Vec::new(), options).unwrap();
    w.write_all(records).unwrap();
    w.finish().unwrap().0
}

fn reader(bytes: Vec<u8>) -> TraceReader {
    TraceReader::from_reader("n", Box::new(std::io::Cursor::new(bytes)), Format::Native).unwrap()
}

fn records(keys: &[u64]) -> Vec<Record> {
    keys.iter()
        .enumerate()
        .map(|(i, &key)| Record {
            key,
            write: i % 3 == 1,
            cont: false,
            fault: false,
            sync: mmsim_trace::SyncSpan::NONE,
        })
        .collect()
}

#[test]
fn dense_keys_are_numbered_by_first_appearance() {
    let input = records(&[900, 5, 900, u64::MAX, 5, 0, 7, 900]);
    let mut r = reader(write(&input, true));
    let mut out = Vec::new();
    assert_eq!(r.read_batch(&mut out, 100).unwrap(), 8);
    assert!(r.dense_keys());
    let keys: Vec<u64> = out.iter().map(|r| r.key).collect();
    assert_eq!(keys, [0, 1, 0, 2, 1, 3, 4, 0]);
    let writes: Vec<bool> = out.iter().map(|r| r.write).collect();
    assert_eq!(writes, input.iter().map(|r| r.write).collect::<Vec<_>>());

    // The same ids as the table gives the original keys, with no table.
    let mut table = Densifier::new(100);
    let mut from_table = Vec::new();
    table.ids(&input, &mut from_table).unwrap();
    let mut dense = Densifier::new(100);
    dense.assume_dense();
    let mut from_dense = Vec::new();
    dense.ids(&out, &mut from_dense).unwrap();
    assert_eq!(from_dense, from_table);
    assert_eq!(dense.distinct(), table.distinct());
    assert_eq!(dense.table_bytes(), 0);

    // Keys as given without the option; the flag is off.
    let mut r = reader(write(&input, false));
    assert_eq!(r.read_batch(&mut out, 100).unwrap(), 8);
    assert!(!r.dense_keys());
    assert_eq!(out[3].key, u64::MAX);
}

#[test]
fn a_key_that_skips_ahead_under_the_flag_is_an_error() {
    // Keys 0, 1, 0, 3: valid without the flag; set it (and the header CRC) by hand.
    let mut bytes = write(&records(&[0, 1, 0, 3, 2]), false);
    let flags = u16::from_le_bytes([bytes[10], bytes[11]]) | FLAG_DENSE_KEYS;
    bytes[10..12].copy_from_slice(&flags.to_le_bytes());
    let crc = crc32fast::hash(&bytes[..12]);
    bytes[12..HEADER_SIZE].copy_from_slice(&crc.to_le_bytes());
    let mut r = reader(bytes);
    let mut out = Vec::new();
    // The records before the bad one are delivered, then the error at record 4.
    assert_eq!(r.read_batch(&mut out, 100).unwrap(), 3);
    let keys: Vec<u64> = out.iter().map(|r| r.key).collect();
    assert_eq!(keys, [0, 1, 0]);
    let e = r.read_batch(&mut out, 100).unwrap_err();
    assert_eq!(
        e.to_string(),
        "n: record 4: expected a dense key of at most 2 (the header's dense-keys flag), found key 3"
    );
}

#[test]
fn unknown_flags_are_refused() {
    let mut bytes = write(&records(&[1, 2]), false);
    bytes[10..12].copy_from_slice(&4u16.to_le_bytes());
    let crc = crc32fast::hash(&bytes[..12]);
    bytes[12..HEADER_SIZE].copy_from_slice(&crc.to_le_bytes());
    let e = reader(bytes).read_batch(&mut Vec::new(), 10).unwrap_err();
    assert_eq!(
        e.to_string(),
        "n: header: expected flags 0x0000 to 0x0003 (bit 0: write bit, bit 1: dense keys), found 0x0004"
    );
}
