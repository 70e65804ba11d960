//! numcodecs' own backwards-compatibility fixture for `FixedScaleOffset` (a verbatim copy
//! in `tests/data/numcodecs_fixedscaleoffset_fixture`, see its `SOURCE.md`): every
//! `codec.0M/encoded.0N.dat` must be reproduced byte for byte from `array.0N.npy` by the
//! codec that `codec.0M/config.json` describes, built through [`DynChain`] for a float64
//! array.
//!
//! numcodecs flattens its input with `reshape(-1, order="A")`, i.e. in memory order, so a
//! Fortran-ordered `.npy` is encoded in the order its data is stored: read as the C-ordered
//! array of the reversed shape (its transpose), which holds the same elements in the same
//! memory order.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use zquant::{DTypeId, DynArray, DynChain};

fn fixture_dir() -> PathBuf {
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/numcodecs_fixedscaleoffset_fixture");
    assert!(
        dir.is_dir(),
        "numcodecs fixture not found at {}",
        dir.display()
    );
    dir
}

/// A `.npy` file's header fields and data bytes.
struct Npy {
    descr: String,
    fortran_order: bool,
    shape: Vec<usize>,
    data: Vec<u8>,
}

/// The text after `'key':` in a header dict, trimmed.
fn header_value<'a>(header: &'a str, key: &str, path: &Path) -> &'a str {
    let pat = format!("'{key}':");
    let at = header
        .find(&pat)
        .unwrap_or_else(|| panic!("{}: no {key:?} in header {header:?}", path.display()));
    header[at + pat.len()..].trim_start()
}

/// A minimal `.npy` reader (format versions 1-3).
fn read_npy(path: &Path) -> Npy {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(
        bytes.starts_with(b"\x93NUMPY"),
        "{}: not a .npy file",
        path.display()
    );
    let major = bytes[6];
    let (header_len, start) = match major {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        v => panic!("{}: unsupported .npy version {v}", path.display()),
    };
    let header = std::str::from_utf8(&bytes[start..start + header_len])
        .unwrap_or_else(|e| panic!("{}: header: {e}", path.display()));

    let descr_text = header_value(header, "descr", path);
    let quote = descr_text.chars().next().expect("descr value");
    let descr = descr_text[1..]
        .split(quote)
        .next()
        .expect("quoted descr")
        .to_string();

    let fortran_text = header_value(header, "fortran_order", path);
    let fortran_order = if fortran_text.starts_with("True") {
        true
    } else if fortran_text.starts_with("False") {
        false
    } else {
        panic!("{}: bad fortran_order {fortran_text:?}", path.display())
    };

    let shape_text = header_value(header, "shape", path);
    let inner = shape_text
        .strip_prefix('(')
        .and_then(|s| s.split(')').next())
        .unwrap_or_else(|| panic!("{}: bad shape {shape_text:?}", path.display()));
    let shape = inner
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<usize>().expect("shape entry"))
        .collect();

    Npy {
        descr,
        fortran_order,
        shape,
        data: bytes[start + header_len..].to_vec(),
    }
}

fn hex_prefix(b: &[u8]) -> String {
    b.iter().take(16).map(|x| format!("{x:02x}")).collect()
}

#[test]
fn numcodecs_fixture_is_reproduced_byte_for_byte() {
    let dir = fixture_dir();

    let mut arrays = Vec::new();
    for n in 0.. {
        let path = dir.join(format!("array.{n:02}.npy"));
        if !path.exists() {
            break;
        }
        let npy = read_npy(&path);
        assert_eq!(
            npy.descr,
            "<f8",
            "{}: expected float64 data",
            path.display()
        );
        let mut shape = npy.shape.clone();
        if npy.fortran_order {
            shape.reverse();
        }
        let a = DynArray::from_le_bytes(DTypeId::Float64, &shape, &npy.data)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        arrays.push(a);
    }
    assert!(!arrays.is_empty(), "no array.NN.npy in {}", dir.display());

    let mut checked = 0;
    for m in 0.. {
        let codec_dir = dir.join(format!("codec.{m:02}"));
        if !codec_dir.is_dir() {
            break;
        }
        let config_path = codec_dir.join("config.json");
        let text = std::fs::read_to_string(&config_path)
            .unwrap_or_else(|e| panic!("{}: {e}", config_path.display()));
        let mut config: serde_json::Map<String, Value> = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{}: {e}", config_path.display()));
        // The Zarr v2 codec id becomes the Zarr v3 name.
        assert_eq!(
            config.remove("id"),
            Some(json!("fixedscaleoffset")),
            "{}",
            config_path.display()
        );
        let codec = json!({"name": "numcodecs.fixedscaleoffset", "configuration": config});
        let chain = DynChain::from_array_to_array_codecs(
            &json!("float64"),
            &json!(0.0),
            std::slice::from_ref(&codec),
        )
        .unwrap_or_else(|e| panic!("{}: {codec}: {e}", config_path.display()));
        assert_eq!(
            chain.to_metadata(),
            json!([codec]),
            "metadata round trip of {}",
            config_path.display()
        );

        for (n, a) in arrays.iter().enumerate() {
            let enc_path = codec_dir.join(format!("encoded.{n:02}.dat"));
            let want =
                std::fs::read(&enc_path).unwrap_or_else(|e| panic!("{}: {e}", enc_path.display()));
            let got = chain
                .encode(a)
                .unwrap_or_else(|e| panic!("{}: encode: {e}", enc_path.display()))
                .to_le_bytes();
            assert_eq!(got.len(), want.len(), "{}: length", enc_path.display());
            if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
                let size = chain.encoded_data_type().id.size();
                let e = i / size;
                panic!(
                    "{}: element {e} differs: expected {}, got {} (bytes from element {e})",
                    enc_path.display(),
                    hex_prefix(&want[e * size..]),
                    hex_prefix(&got[e * size..])
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 0, "no codec.NN directories in {}", dir.display());
}
