//! Turning a byte offset of a TOML parse error into a line, a column and a dotted field
//! path (`machine.memory`, `workload[2].theta`).
//!
//! The `toml` crate reports *where* an error is (a byte span) but not under which key; we
//! recover the key from the text: the last table header before the position (with
//! `[[array]]` headers counted, so the n-th `[[workload]]` is `workload[n-1]`) and the
//! key of the `key = value` line the position is on. This is a best-effort reading of
//! ordinary scenario files (one key per line); in exotic layouts (a key inside a
//! multi-line inline table) the path may be only the enclosing table.

use std::collections::BTreeMap;

/// Position of an error in a TOML text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Pos {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// Dotted path of the field or table at that position, if any.
    pub field: Option<String>,
}

/// One meaningful line of a TOML text: its table and key.
struct Line {
    /// 1-based line number.
    line: usize,
    /// Dotted path of the table the line is in (or the header's table).
    table: String,
    /// The key of a `key = value` line; `None` for a header.
    key: Option<String>,
    /// 1-based column of the key (or the header).
    column: usize,
}

/// The headers and `key = value` lines of `text`, with their tables (skipping comments,
/// blank lines and the inside of multi-line strings).
fn scan(text: &str) -> Vec<Line> {
    let mut out = Vec::new();
    let mut table = String::new();
    let mut arrays: BTreeMap<String, usize> = BTreeMap::new();
    let mut in_multiline = false;
    for (i, raw) in text.lines().enumerate() {
        let quotes = raw.matches("\"\"\"").count() + raw.matches("'''").count();
        if in_multiline {
            if quotes % 2 == 1 {
                in_multiline = false;
            }
            continue;
        }
        let t = raw.trim();
        let column = raw.chars().take_while(|c| c.is_whitespace()).count() + 1;
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        if let Some(rest) = t.strip_prefix("[[") {
            let name = rest.split("]]").next().unwrap_or("").trim().to_string();
            let n = arrays.entry(name.clone()).or_insert(0);
            *n += 1;
            table = format!("{name}[{}]", *n - 1);
            out.push(Line {
                line: i + 1,
                table: table.clone(),
                key: None,
                column,
            });
        } else if let Some(rest) = t.strip_prefix('[') {
            let name = rest.split(']').next().unwrap_or("").trim();
            table = index_arrays(name, &arrays);
            out.push(Line {
                line: i + 1,
                table: table.clone(),
                key: None,
                column,
            });
        } else {
            let key = t
                .split_once('=')
                .map(|(k, _)| k.trim().trim_matches(|c| c == '"' || c == '\'').to_string())
                .filter(|k| !k.is_empty());
            out.push(Line {
                line: i + 1,
                table: table.clone(),
                key,
                column,
            });
        }
        if quotes % 2 == 1 {
            in_multiline = true;
        }
    }
    out
}

fn join(table: &str, key: Option<&str>) -> Option<String> {
    match (table.is_empty(), key) {
        (true, None) => None,
        (true, Some(k)) => Some(k.to_string()),
        (false, None) => Some(table.to_string()),
        (false, Some(k)) => Some(format!("{table}.{k}")),
    }
}

/// Locates byte `offset` of `text`.
pub(crate) fn locate(text: &str, offset: usize) -> Pos {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = text[line_start..offset].chars().count() + 1;
    let lines = scan(text);
    let field = match lines.iter().rev().find(|l| l.line <= line) {
        Some(l) if l.line == line => join(&l.table, l.key.as_deref()),
        Some(l) => join(&l.table, None),
        None => None,
    };
    Pos {
        line,
        column,
        field,
    }
}

/// Where `key` of table `table` is (`key` None: the table's header), if it is there.
pub(crate) fn find(text: &str, table: &str, key: Option<&str>) -> Option<Pos> {
    scan(text)
        .into_iter()
        .find(|l| l.table == table && l.key.as_deref() == key)
        .map(|l| Pos {
            line: l.line,
            column: l.column,
            field: join(&l.table, l.key.as_deref()),
        })
}

/// `workload.cost` after two `[[workload]]` headers is `workload[1].cost`.
fn index_arrays(name: &str, arrays: &BTreeMap<String, usize>) -> String {
    let mut parts: Vec<String> = Vec::new();
    for part in name.split('.') {
        let part = part.trim();
        let prefix = if parts.is_empty() {
            part.to_string()
        } else {
            format!("{}.{part}", parts.join("."))
        };
        match arrays.get(&prefix) {
            Some(n) => parts.push(format!("{part}[{}]", n - 1)),
            None => parts.push(part.to_string()),
        }
    }
    parts.join(".")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_table_and_key() {
        let text = "seed = 3\n[machine]\nmemory = \"1M\"\n\n[[workload]]\nkind = \"zipf\"\n[[workload]]\n# c\ntheta = 9\n";
        let off = text.find("\"1M\"").unwrap();
        assert_eq!(
            locate(text, off),
            Pos {
                line: 3,
                column: 10,
                field: Some("machine.memory".into())
            }
        );
        let off = text.find("9").unwrap();
        assert_eq!(
            locate(text, off).field.as_deref(),
            Some("workload[1].theta")
        );
        let off = text.find("seed").unwrap();
        assert_eq!(locate(text, off).field.as_deref(), Some("seed"));
        let off = text.rfind("[[workload]]").unwrap();
        assert_eq!(locate(text, off).field.as_deref(), Some("workload[1]"));
        let p = find(text, "workload[1]", Some("theta")).unwrap();
        assert_eq!((p.line, p.column), (9, 1));
        assert_eq!(find(text, "workload[1]", None).unwrap().line, 7);
        assert!(find(text, "workload[2]", None).is_none());
    }

    #[test]
    fn subtables_of_array_elements() {
        let text = "[[workload]]\nx = 1\n[workload.sub]\ny = 2\n";
        let off = text.find("y").unwrap();
        assert_eq!(
            locate(text, off).field.as_deref(),
            Some("workload[0].sub.y")
        );
    }
}
