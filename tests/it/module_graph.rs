//! The module graph runs one way: each top-level module of `src/` names (`crate::…`, in
//! `use` items and paths) only the modules before it in [`ORDER`], the order
//! docs/ARCHITECTURE.md gives. A new upward import fails here, naming the file and line.
//! Comments are skipped (doc links are no dependency), and so is a file's `#[cfg(test)]`
//! module, which ends it. A `crate::{…}` group that rustfmt wraps over several lines is
//! read whole, and reported at its first line.
//!
//! The same reading checks the codec registry's promise: each codec name (and alias) is
//! written once in `src/`, in its codec module; everything else derives from the table.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The layers, lowest first. Modules in one entry may not name each other either: an entry
/// lists modules that use none of the others in it (there are none today).
const ORDER: &[&str] = &[
    "number",
    "arch",
    "dtype",
    "convert",
    "error",
    "metadata",
    "codec",
    "choose",
    "pipeline",
    "parallel",
    "dispatch",
    "conformance",
    "zarr",
    "plan",
    "zarrs",
];

/// Upward edges kept on purpose, each with its reason. The test fails when one of them no
/// longer occurs, so that the list only shrinks. There are none.
const KNOWN: &[(&str, &str, &str)] = &[];

fn rank(module: &str) -> Option<usize> {
    ORDER.iter().position(|m| *m == module)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src/") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file of `src/` belongs to (`None` for `lib.rs`).
fn owner(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).expect("under src/");
    let first = rel.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (name != "lib").then(|| name.to_string())
}

/// The top-level modules named by `crate::` paths on one line of code: `crate::a::…` and
/// each first segment of a `crate::{a::…, b, …}` group.
fn named_modules(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let bytes = line.as_bytes();
    let mut from = 0;
    while let Some(at) = line[from..].find("crate::") {
        let start = from + at;
        from = start + "crate::".len();
        // `$crate::` (macros) reaches the crate root's macros, and `zquant_crate::` is not
        // ours: only a `crate` that starts a path counts.
        if start > 0
            && (bytes[start - 1].is_ascii_alphanumeric() || b"_$".contains(&bytes[start - 1]))
        {
            continue;
        }
        let rest = &line[from..];
        if let Some(group) = rest.strip_prefix('{') {
            // First segment of each item at brace depth 0.
            let mut depth = 0;
            let mut item = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.push(first_segment(&item));
                        item.clear();
                        continue;
                    }
                    _ => {}
                }
                item.push(c);
            }
            out.push(first_segment(&item));
        } else {
            out.push(first_segment(rest));
        }
    }
    out.retain(|m| !m.is_empty());
    out
}

fn first_segment(s: &str) -> String {
    s.trim()
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

/// The code of a line: nothing of a `//` comment (doc links name paths too, but they are
/// no dependency).
fn code(line: &str) -> &str {
    match line.find("//") {
        Some(i) => &line[..i],
        None => line,
    }
}

/// The code of every line the checks read, in file order: `(file, "file:line", code)`. A
/// file's unit tests (its last item, from `#[cfg(test)]`) may use any layer and write any
/// literal, so they end the file here.
fn code_lines(src: &Path) -> Vec<(PathBuf, String, String)> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("read a source file");
        let rel = file
            .strip_prefix(src)
            .expect("under src/")
            .display()
            .to_string();
        for (n, code) in statements(&text) {
            out.push((file.clone(), format!("{rel}:{n}"), code));
        }
    }
    out
}

/// The code of a file's lines, numbered from 1, up to its `#[cfg(test)]` module; a line
/// that opens a `crate::{` group and does not close it is joined with the lines that
/// follow until the group closes (rustfmt wraps long groups), under the first one's number.
fn statements(text: &str) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = Vec::new();
    let mut open: Option<(usize, String, i32)> = None;
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("#[cfg(test)]") {
            break;
        }
        let code = code(line);
        if let Some((at, mut joined, depth)) = open.take() {
            joined.push(' ');
            joined.push_str(code.trim());
            let depth = depth + braces(code);
            if depth > 0 {
                open = Some((at, joined, depth));
            } else {
                out.push((at, joined));
            }
            continue;
        }
        match code.find("crate::{") {
            Some(i) if braces(&code[i..]) > 0 => {
                open = Some((n + 1, code.to_string(), braces(&code[i..])));
            }
            _ => out.push((n + 1, code.to_string())),
        }
    }
    out.extend(open.map(|(at, joined, _)| (at, joined)));
    out
}

/// `{` minus `}` on a piece of code.
fn braces(code: &str) -> i32 {
    code.chars()
        .map(|c| match c {
            '{' => 1,
            '}' => -1,
            _ => 0,
        })
        .sum()
}

/// Every edge against the order: `(from, to, "file:line")`.
fn upward_edges(src: &Path) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for (file, at, code) in code_lines(src) {
        let Some(from) = owner(src, &file) else {
            continue;
        };
        out.extend(edges_against_order(&from, &at, &code));
    }
    out
}

/// The edges against the order on one statement of module `from`.
fn edges_against_order(from: &str, at: &str, code: &str) -> Vec<(String, String, String)> {
    let from_rank = rank(from)
        .unwrap_or_else(|| panic!("module {from} is not in ORDER: place it in its layer"));
    let mut out = Vec::new();
    for to in named_modules(code) {
        // Items of the crate root (`crate::__zquant_dtype_table!`, re-exports) are not a
        // module of the graph.
        let Some(to_rank) = rank(&to) else { continue };
        if to != from && to_rank >= from_rank {
            out.push((from.to_string(), to, at.to_string()));
        }
    }
    out
}

/// The edges against the order in a file's text, as module `from` (for the planted tests).
fn edges_in_text(from: &str, text: &str) -> Vec<(String, String, String)> {
    statements(text)
        .into_iter()
        .flat_map(|(n, code)| edges_against_order(from, &format!("planted.rs:{n}"), &code))
        .collect()
}

#[test]
fn every_module_uses_only_the_layers_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let edges = upward_edges(&src);
    let unexpected: Vec<_> = edges
        .iter()
        .filter(|(from, to, _)| !KNOWN.iter().any(|(f, t, _)| f == from && t == to))
        .collect();
    assert!(
        unexpected.is_empty(),
        "imports against the module order {ORDER:?} (docs/ARCHITECTURE.md):\n{}",
        unexpected
            .iter()
            .map(|(f, t, at)| format!("  {f} -> {t} at src/{at}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    let seen: BTreeSet<_> = edges
        .iter()
        .map(|(f, t, _)| (f.as_str(), t.as_str()))
        .collect();
    for (f, t, why) in KNOWN {
        assert!(
            seen.contains(&(*f, *t)),
            "{f} -> {t} ({why}) no longer occurs: drop it from KNOWN"
        );
    }
}

#[test]
fn each_codec_name_is_written_once() {
    let lines = code_lines(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    for name in zquant::CODEC_NAMES {
        let quoted = format!("\"{name}\"");
        let at: Vec<_> = lines
            .iter()
            .filter(|(_, _, code)| code.contains(&quoted))
            .map(|(_, at, _)| at.as_str())
            .collect();
        assert!(
            at.len() == 1 && at[0].starts_with("codec/"),
            "codec name {name:?} is written at {at:?}: write it once, in its codec module's \
             NAME/ALIAS, and name that constant elsewhere"
        );
    }
}

#[test]
fn the_reader_sees_paths_and_groups() {
    assert_eq!(named_modules("use crate::dtype::{Word, Words};"), ["dtype"]);
    assert_eq!(
        named_modules("use crate::{codec::Fusion, dtype::{A, B}, error};"),
        ["codec", "dtype", "error"]
    );
    assert_eq!(
        named_modules("    let x = crate::arch::zeroed_vec(n);"),
        ["arch"]
    );
    assert_eq!(
        named_modules("$crate::__zquant_dtype_table!(m)"),
        Vec::<String>::new()
    );
    assert_eq!(code("use a; // crate::zarrs"), "use a; ");
}

#[test]
fn a_wrapped_upward_group_is_caught() {
    // rustfmt's wrapping of a long group: the upward `dispatch` sits on the third line.
    let planted = "use crate::{\n    dtype::DTypeId,\n    dispatch::DynArray,\n};\nfn f() {}\n";
    assert_eq!(
        edges_in_text("convert", planted),
        [(
            "convert".to_string(),
            "dispatch".to_string(),
            "planted.rs:1".to_string()
        )]
    );
    // Nested groups, and a wrapped `pub(crate) use` with a comment inside.
    let nested = "pub(crate) use crate::{\n    number::{\n        exact::Exact, // crate::zarr\n    },\n    zarr::ArrayMetadata,\n};\n";
    let edges = edges_in_text("codec", nested);
    assert_eq!(edges.len(), 1, "{edges:?}");
    assert_eq!(
        (edges[0].1.as_str(), edges[0].2.as_str()),
        ("zarr", "planted.rs:1")
    );
    // The same group downward is no edge, and the lines after it keep their numbers.
    let fine = "use crate::{\n    number::Status,\n};\nuse crate::plan::Plan;\n";
    assert_eq!(
        edges_in_text("zarr", fine),
        [(
            "zarr".to_string(),
            "plan".to_string(),
            "planted.rs:4".to_string()
        )]
    );
    // Code after a file's unit tests is not read.
    let tests = "#[cfg(test)]\nmod tests { use crate::zarrs; }\n";
    assert!(edges_in_text("number", tests).is_empty());
}
