//! Bad inputs for the formats added after text/lirs/arc/oracle-general: each gives a clear
//! error naming the file, the line or record (or native header/block/footer) and what was
//! expected; records before the fault are delivered; nothing panics or allocates by a
//! length field.

use std::io::Cursor;

use mmsim_trace::native::{BLOCK_HEADER_SIZE, FOOTER_SIZE, HEADER_SIZE, MAGIC};
use mmsim_trace::{Format, NativeOptions, NativeWriter, Position, Record, TraceError, TraceReader};

/// Reads everything; returns the records before the error, the error and the reader.
fn read(
    name: &str,
    bytes: Vec<u8>,
    format: Format,
) -> (Vec<Record>, Option<TraceError>, TraceReader) {
    let mut r = TraceReader::from_reader(name, Box::new(Cursor::new(bytes)), format).unwrap();
    let mut ok = Vec::new();
    let mut err = None;
    for item in r.by_ref() {
        match item {
            Ok(rec) => ok.push(rec),
            Err(e) => {
                assert!(err.is_none(), "more than one error");
                err = Some(e);
            }
        }
    }
    assert!(r.next().is_none());
    (ok, err, r)
}

fn err(name: &str, bytes: impl Into<Vec<u8>>, format: Format) -> (usize, TraceError) {
    let (ok, e, _) = read(name, bytes.into(), format);
    (ok.len(), e.expect("an error"))
}

fn vscsi_v1(cmd: u16, len: u32, lbn: u64) -> [u8; 32] {
    let mut r = [0u8; 32];
    r[4..8].copy_from_slice(&len.to_le_bytes());
    r[12..14].copy_from_slice(&cmd.to_le_bytes());
    r[14..16].copy_from_slice(&0x0100u16.to_le_bytes());
    r[16..24].copy_from_slice(&lbn.to_le_bytes());
    r
}

fn vscsi_v2(cmd: u16, len: u32, lbn: u64) -> [u8; 40] {
    let mut r = [0u8; 40];
    r[0..2].copy_from_slice(&cmd.to_le_bytes());
    r[2..4].copy_from_slice(&0x0200u16.to_le_bytes());
    r[8..12].copy_from_slice(&len.to_le_bytes());
    r[16..24].copy_from_slice(&lbn.to_le_bytes());
    r
}

#[test]
fn vscsi_bad_records() {
    // Good records, skipped ones, then a truncated record.
    let mut data = Vec::new();
    data.extend(vscsi_v1(0x28, 4096, 8)); // read page 1
    data.extend(vscsi_v1(0x12, 36, 0)); // INQUIRY: skipped
    data.extend(vscsi_v1(0x8a, 0, 0)); // WRITE(16) of 0 bytes: skipped
    data.extend(vscsi_v1(0x0a, 1024, 7)); // WRITE(6) of bytes 3584..4608: pages 0 and 1
    data.extend(&vscsi_v1(0x28, 512, 0)[..10]);
    let (ok, e, r) = read("t.vscsi", data, Format::Vscsi);
    assert_eq!(
        ok,
        [
            Record {
                key: 1,
                write: false,
                cont: false,
                fault: false,
                sync: mmsim_trace::SyncSpan::NONE,
            },
            Record {
                key: 0,
                write: true,
                cont: false,
                fault: false,
                sync: mmsim_trace::SyncSpan::NONE,
            },
            Record {
                key: 1,
                write: true,
                cont: true, // the second page of the WRITE(6)
                fault: false,
                sync: mmsim_trace::SyncSpan::NONE,
            }
        ]
    );
    assert_eq!(
        e.unwrap().to_string(),
        "t.vscsi: record 5: truncated: 10 of 32 bytes"
    );
    assert_eq!(r.stats().records, 4);
    assert_eq!(r.stats().skipped_commands, 1);
    assert_eq!(r.stats().skipped_zero_length, 1);
    assert_eq!(r.stats().writes, 2);

    // A record with another version byte (misaligned or corrupt).
    let mut data = vscsi_v1(0x28, 512, 0).repeat(3);
    data[2 * 32 + 15] = 7;
    let (n, e) = err("t.vscsi", data, Format::Vscsi);
    assert_eq!(n, 2);
    assert_eq!(
        e.to_string(),
        "t.vscsi: record 3: expected a vscsi v1 record (version byte 1 at offset 15), found version byte 07"
    );
    assert_eq!(e.record(), Some(3));

    // An absurd length field: an error naming the record, nothing allocated for it.
    let mut data = vscsi_v1(0x28, 512, 0).to_vec();
    data.extend(vscsi_v1(0x2a, u32::MAX, 0));
    let (n, e) = err("t.vscsi", data, Format::Vscsi);
    assert_eq!(n, 1);
    assert_eq!(
        e.to_string(),
        "t.vscsi: record 2: request length in bytes 4294967295 exceeds the limit of 1073741824"
    );
    assert!(matches!(
        e,
        TraceError::TooLarge {
            at: Position::Record(2),
            ..
        }
    ));

    // An lbn whose byte offset overflows.
    let (_, e) = err(
        "t.vscsi",
        vscsi_v1(0x28, 512, u64::MAX / 256),
        Format::Vscsi,
    );
    assert!(
        e.to_string()
            .starts_with("t.vscsi: record 1: expected a sector number"),
        "{e}"
    );

    // Neither version.
    let (_, e) = err("t.vscsi", [0u8; 64], Format::Vscsi);
    assert!(
        e.to_string()
            .starts_with("t.vscsi: record 1: expected a vscsi record"),
        "{e}"
    );

    // Version 2 records read too, and a 1 GiB request is accepted (lazily expanded).
    let mut data = vscsi_v2(0x88, 8192, 16).to_vec();
    data.extend(vscsi_v2(0x2a, 1 << 30, 0));
    let (ok, e, _) = read("t2.vscsi", data, Format::Vscsi);
    assert!(e.is_none(), "{e:?}");
    assert_eq!(ok.len(), 2 + (1 << 18));
    assert_eq!(
        &ok[..2],
        &[
            Record {
                key: 2,
                write: false,
                cont: false,
                fault: false,
                sync: mmsim_trace::SyncSpan::NONE,
            },
            Record {
                key: 3,
                write: false,
                cont: true,
                fault: false,
                sync: mmsim_trace::SyncSpan::NONE,
            }
        ]
    );
    assert!(ok[2..]
        .iter()
        .enumerate()
        .all(|(i, r)| r.key == i as u64 && r.write && r.cont == (i > 0)));
}

#[test]
fn csv_and_msr_bad_lines() {
    let csv = "version,time,op,size,lbn\n1,5,28,4096,8\n1,5,2a,512\n";
    let (n, e) = err("c.csv", csv, Format::LibCacheSimCsv);
    assert_eq!(n, 1);
    assert_eq!(e.line(), Some(3));
    assert!(e.to_string().starts_with(
        "c.csv: line 3: expected `version,time,op,size,lbn` with unsigned integers and op a hexadecimal SCSI command, found 4 comma-separated fields"
    ), "{e}");
    let (_, e) = err(
        "c.csv",
        "1,5,28,4096,8\nversion,time,op,size,lbn\n",
        Format::LibCacheSimCsv,
    );
    assert_eq!(e.line(), Some(2), "{e}");
    let (_, e) = err("c.csv", "1,5,28,99999999999,8\n", Format::LibCacheSimCsv);
    assert_eq!(
        e.to_string(),
        "c.csv: line 1: request length in bytes 99999999999 exceeds the limit of 1073741824"
    );
    let (ok, e, r) = read(
        "c.csv",
        b"1,5,12,4096,8\n1,5,28,0,8\n".to_vec(),
        Format::LibCacheSimCsv,
    );
    assert!(ok.is_empty() && e.is_none());
    assert_eq!(
        (r.stats().skipped_commands, r.stats().skipped_zero_length),
        (1, 1)
    );

    let msr = "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n1,hm,0,Read,0,4096,5\n1,hm,0,Flush,0,4096,5\n";
    let (ok, e, r) = read("m.csv", msr.as_bytes().to_vec(), Format::Msr);
    assert_eq!(
        ok,
        [Record {
            key: 0,
            write: false,
            cont: false,
            fault: false,
            sync: mmsim_trace::SyncSpan::NONE,
        }]
    );
    let e = e.unwrap();
    assert_eq!(e.line(), Some(3));
    assert!(
        e.to_string()
            .starts_with("m.csv: line 3: expected `Timestamp,Hostname"),
        "{e}"
    );
    assert!(
        e.to_string().ends_with("found \"1,hm,0,Flush,0,4096,5\""),
        "{e}"
    );
    assert_eq!(r.stats().skipped_headers, 1);
    let (_, e) = err(
        "m.csv",
        "1,hm,0,Write,18446744073709551615,2,5\n",
        Format::Msr,
    );
    assert!(
        e.to_string()
            .starts_with("m.csv: line 1: expected a byte range below 2^64"),
        "{e}"
    );
    let (_, e) = err("m.csv", "1,hm,0,Write,0,2000000000,5\n", Format::Msr);
    assert!(
        matches!(
            e,
            TraceError::TooLarge {
                value: 2_000_000_000,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn address_traces_bad_lines() {
    for (format, name, data, line, start) in [
        (
            Format::Memsim,
            "m.trace",
            "0041f7a0 R\n0041f7a0 X\n",
            2,
            "m.trace: line 2: expected `<hex address> R|W`, found \"0041f7a0 X\"",
        ),
        (
            Format::Memsim,
            "m.trace",
            "zz R\n",
            1,
            "m.trace: line 1: expected `<hex address> R|W`",
        ),
        (
            Format::Ucsd,
            "u.trace",
            "l 0x10 1\ns 0x10\n",
            2,
            "u.trace: line 2: expected `l|s 0x<hex address> <instructions>`",
        ),
        (
            Format::Ucsd,
            "u.trace",
            "q 0x10 1\n",
            1,
            "u.trace: line 1: expected `l|s",
        ),
        (
            Format::Lackey,
            "l.out",
            "==1== hi\nI  0400,3\nhello\n",
            3,
            "l.out: line 3: expected a lackey line",
        ),
        (
            Format::Lackey,
            "l.out",
            " L 0400,99999999999\n",
            1,
            "l.out: line 1: access size in bytes 99999999999 exceeds the limit of 1073741824",
        ),
        (
            Format::Lackey,
            "l.out",
            " L ffffffffffffffff,2\n",
            1,
            "l.out: line 1: expected an access below address 2^64",
        ),
        (
            Format::Filemap,
            "f.txt",
            "x: mm_filemap_fault: dev=8:1 ino=2\n",
            1,
            "f.txt: line 1: expected `dev=MAJOR:MINOR ino=HEX ofs=OFFSET`",
        ),
        (
            Format::Filemap,
            "f.txt",
            "x: mm_filemap_get_pages: dev=8:1 ino=2 ofs=8192-4095\n",
            1,
            "f.txt: line 1: expected a range whose end is not before its start, found 8192-4095",
        ),
        (
            Format::Filemap,
            "f.txt",
            "x: mm_filemap_get_pages: dev=8:1 ino=2 ofs=0-4294967295\n",
            1,
            "f.txt: line 1: range length in bytes 4294967296 exceeds the limit of 1073741824",
        ),
        (
            Format::Filemap,
            "f.txt",
            "x: mm_filemap_fault: dev=8:1 ino=2 ofs=4503599627370496\n",
            1,
            "f.txt: line 1: page index 1099511627776 exceeds the limit of 1099511627775",
        ),
        (
            Format::Filemap,
            "f.txt",
            "x: mm_filemap_add_to_page_cache: dev 8:1 ino 2 pfn=0x1 ofs=0 order=40\n",
            1,
            "f.txt: line 1: folio order 40 exceeds the limit of 18",
        ),
    ] {
        let (_, e) = err(name, data, format);
        assert_eq!(e.line(), Some(line), "{e}");
        assert!(e.to_string().starts_with(start), "{format}: {e}");
        assert_eq!(e.file(), name);
    }
}

#[test]
fn key_arrays_truncated() {
    for (format, size) in [(Format::I32Be, 4), (Format::I64Be, 8), (Format::U32Le, 4)] {
        let mut data = vec![1u8; 3 * size];
        data.push(9);
        let (n, e) = err("k.bin", data, format);
        assert_eq!(n, 3, "{format}");
        assert_eq!(
            e.to_string(),
            format!("k.bin: record 4: truncated: 1 of {size} bytes"),
            "{format}"
        );
    }
}

fn native(records: &[Record], options: NativeOptions) -> Vec<u8> {
    let mut w = NativeWriter::with_options("n", Vec::new(), options).unwrap();
    w.write_all(records).unwrap();
    w.finish().unwrap().0
}

fn keys(n: u64) -> Vec<Record> {
    (0..n)
        .map(|i| Record {
            key: i * 7 % 1000,
            write: i % 5 == 0,
            cont: false,
            fault: false,
            sync: mmsim_trace::SyncSpan::NONE,
        })
        .collect()
}

fn two_blocks() -> Vec<u8> {
    native(
        &keys(20),
        NativeOptions {
            block_records: 10,
            ..NativeOptions::default()
        },
    )
}

#[test]
fn native_bad_headers() {
    let good = two_blocks();
    let msg = |bytes: Vec<u8>| err("t.mmsim", bytes, Format::Native).1.to_string();
    // Wrong magic (a text file read as native).
    assert_eq!(
        msg(b"42932745\n42932746\n".to_vec()),
        "t.mmsim: header: expected the native magic number 89 4d 4d 53 49 4d 0d 0a, found 34 32 39 33 32 37 34 35"
    );
    assert!(msg(MAGIC[..5].to_vec()).contains("found 5 bytes: 89 4d 4d 53 49"));
    assert!(msg(MAGIC.to_vec()).contains("expected a 16-byte header, found 8 bytes"));
    // Unknown version.
    let mut v = good.clone();
    v[8] = 2;
    assert_eq!(
        msg(v),
        "t.mmsim: header: expected version 1 (this reader's), found version 2"
    );
    // Header CRC.
    let mut c = good.clone();
    c[10] = 3;
    assert!(msg(c).starts_with("t.mmsim: header: expected header CRC-32 0x"));
}

fn patch_crc(bytes: &mut [u8], block_at: usize, comp_len: usize) {
    let mut h = crc32fast::Hasher::new();
    h.update(&bytes[block_at..block_at + 12]);
    h.update(&bytes[block_at + 16..block_at + 16 + comp_len]);
    let crc = h.finalize();
    bytes[block_at + 12..block_at + 16].copy_from_slice(&crc.to_le_bytes());
}

#[test]
fn native_bad_blocks() {
    let good = two_blocks();
    let b1 = HEADER_SIZE;
    let comp1 = u32::from_le_bytes(good[b1 + 8..b1 + 12].try_into().unwrap()) as usize;
    let b2 = b1 + BLOCK_HEADER_SIZE + comp1;
    let comp2 = u32::from_le_bytes(good[b2 + 8..b2 + 12].try_into().unwrap()) as usize;
    let footer = b2 + BLOCK_HEADER_SIZE + comp2;
    assert_eq!(footer + FOOTER_SIZE, good.len());
    let want: Vec<u64> = keys(20).iter().map(|r| r.key).collect();

    // Truncated inside the second block's payload: the first block's records, then the error.
    let (ok, e, _) = read(
        "t.mmsim",
        good[..b2 + BLOCK_HEADER_SIZE + 3].to_vec(),
        Format::Native,
    );
    assert_eq!(ok.iter().map(|r| r.key).collect::<Vec<_>>(), &want[..10]);
    let e = e.unwrap();
    assert_eq!(
        e.to_string(),
        format!(
            "t.mmsim: block 2 (from record 11): expected {comp2} bytes of compressed data, found 3 bytes before the end of the file (the trace is truncated)"
        )
    );
    assert_eq!(e.record(), Some(11));
    // Truncated inside a block header.
    let (_, e) = err("t.mmsim", good[..b2 + 7].to_vec(), Format::Native);
    assert!(
        e.to_string()
            .ends_with("expected a 16-byte block header, found 7 bytes before the end of the file"),
        "{e}"
    );
    // No footer.
    let (n, e) = err("t.mmsim", good[..footer].to_vec(), Format::Native);
    assert_eq!(n, 20);
    assert_eq!(
        e.to_string(),
        "t.mmsim: block 3 (from record 21): expected another block or the footer, found the end of the file (the trace is truncated)"
    );
    // Footer cut.
    let (_, e) = err("t.mmsim", good[..footer + 10].to_vec(), Format::Native);
    assert_eq!(
        e.to_string(),
        "t.mmsim: footer: expected a 24-byte footer, found 10 bytes before the end of the file"
    );
    // Checksum mismatch: a flipped payload byte.
    let mut c = good.clone();
    c[b2 + BLOCK_HEADER_SIZE + 1] ^= 0x40;
    let (n, e) = err("t.mmsim", c, Format::Native);
    assert_eq!(n, 10);
    assert!(
        e.to_string()
            .starts_with("t.mmsim: block 2 (from record 11): expected block CRC-32 0x"),
        "{e}"
    );
    // Absurd lengths: errors before anything is allocated or read for them.
    for (field, value, what) in [
        (
            4,
            u32::MAX,
            "decompressed block length in bytes 4294967295 exceeds the limit of 16777216",
        ),
        (
            8,
            u32::MAX,
            "compressed block length in bytes 4294967295 exceeds the limit of 16908288",
        ),
    ] {
        let mut c = good.clone();
        c[b1 + field..b1 + field + 4].copy_from_slice(&value.to_le_bytes());
        let (n, e) = err("t.mmsim", c, Format::Native);
        assert_eq!(n, 0);
        assert_eq!(
            e.to_string(),
            format!("t.mmsim: block 1 (from record 1): {what}")
        );
    }
    // More records than bytes.
    let mut c = good.clone();
    c[b1..b1 + 4].copy_from_slice(&100_000u32.to_le_bytes());
    assert!(err("t.mmsim", c, Format::Native)
        .1
        .to_string()
        .contains("records 100000, raw_len"));
    // A record count that does not match the varints (CRC patched to pass): bytes left.
    let mut c = good.clone();
    c[b1..b1 + 4].copy_from_slice(&9u32.to_le_bytes());
    patch_crc(&mut c, b1, comp1);
    let (n, e) = err("t.mmsim", c, Format::Native);
    assert_eq!(n, 9);
    assert!(
        e.to_string().starts_with(
            "t.mmsim: record 9: expected the end of the block after its last record, found "
        ),
        "{e}"
    );
    // A raw_len that does not match the frame (CRC patched).
    let mut c = good.clone();
    let raw1 = u32::from_le_bytes(c[b1 + 4..b1 + 8].try_into().unwrap());
    c[b1 + 4..b1 + 8].copy_from_slice(&(raw1 + 1).to_le_bytes());
    patch_crc(&mut c, b1, comp1);
    let (_, e) = err("t.mmsim", c, Format::Native);
    assert_eq!(
        e.to_string(),
        format!(
            "t.mmsim: block 1 (from record 1): expected {} decompressed bytes, found {raw1} bytes",
            raw1 + 1
        )
    );
    // Footer counts that differ from what was read (CRC recomputed).
    let mut c = good.clone();
    c[footer + 12..footer + 20].copy_from_slice(&21u64.to_le_bytes());
    let crc = crc32fast::hash(&c[footer..footer + 20]);
    c[footer + 20..].copy_from_slice(&crc.to_le_bytes());
    let (n, e) = err("t.mmsim", c, Format::Native);
    assert_eq!(n, 20);
    assert_eq!(
        e.to_string(),
        "t.mmsim: footer: expected 2 blocks and 20 records, as read, found 2 blocks and 21 records"
    );
    // Bytes after the footer.
    let mut c = good.clone();
    c.extend_from_slice(b"junk");
    let (n, e) = err("t.mmsim", c, Format::Native);
    assert_eq!(n, 20);
    assert!(
        e.to_string()
            .starts_with("t.mmsim: footer: expected the end of the file after the footer"),
        "{e}"
    );
}

fn splitmix64(i: u64) -> u64 {
    let mut z = i.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[test]
fn native_large_blocks_and_their_truncation() {
    // Blocks of 2^20 random-looking keys compress to more than the 256 KiB input buffer.
    let records: Vec<Record> = (0..(3u64 << 19))
        .map(|i| Record {
            key: splitmix64(i),
            write: i % 3 == 0,
            cont: false,
            fault: false,
            sync: mmsim_trace::SyncSpan::NONE,
        })
        .collect();
    let bytes = native(
        &records,
        NativeOptions {
            block_records: 1 << 20,
            ..NativeOptions::default()
        },
    );
    let comp1 = u32::from_le_bytes(bytes[HEADER_SIZE + 8..HEADER_SIZE + 12].try_into().unwrap());
    assert!(comp1 > 256 * 1024, "{comp1}");
    let (ok, e, r) = read("big", bytes.clone(), Format::Native);
    assert!(e.is_none(), "{e:?}");
    assert!(ok == records);
    assert_eq!(
        r.stats().writes,
        records.iter().filter(|r| r.write).count() as u64
    );
    let cut = HEADER_SIZE + BLOCK_HEADER_SIZE + 300_000;
    let (n, e) = err("big", bytes[..cut].to_vec(), Format::Native);
    assert_eq!(n, 0);
    assert_eq!(
        e.to_string(),
        format!("big: block 1 (from record 1): expected {comp1} bytes of compressed data, found 300000 bytes before the end of the file (the trace is truncated)")
    );
}
