//! Human-readable numbers for the tables of the tools.

/// A byte count with SI units and three significant digits: `"812 B"`,
/// `"1.23 kB"`, `"45.6 MB"`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["kB", "MB", "GB", "TB", "PB", "EB"];
    if n < 1000 {
        return format!("{n} B");
    }
    let mut v = n as f64;
    let mut unit = "B";
    for u in UNITS {
        if v < 999.5 {
            break;
        }
        v /= 1000.0;
        unit = u;
    }
    if v < 9.995 {
        format!("{v:.2} {unit}")
    } else if v < 99.95 {
        format!("{v:.1} {unit}")
    } else {
        format!("{v:.0} {unit}")
    }
}

/// An integer with thousands separators: `"1,234,567"`.
pub fn count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A ratio with three significant digits, or `"-"` when undefined.
pub fn ratio(r: Option<f64>) -> String {
    match r {
        Some(r) if r < 9.995 => format!("{r:.2}"),
        Some(r) if r < 99.95 => format!("{r:.1}"),
        Some(r) => format!("{r:.0}"),
        None => "-".into(),
    }
}

/// `num / den`, `None` when `den` is zero.
pub fn div(num: u64, den: u64) -> Option<f64> {
    (den != 0).then(|| num as f64 / den as f64)
}

/// The compression setting as algorithm and level, e.g. `"505 (zstd 5)"`.
pub fn compression(setting: u32) -> String {
    let algorithm = match setting / 100 {
        0 => "global default",
        1 => "zlib",
        2 => "lzma",
        3 => "old zlib",
        4 => "lz4",
        5 => "zstd",
        _ => "unknown",
    };
    if setting % 100 == 0 {
        format!("{setting} (uncompressed)")
    } else {
        format!("{setting} ({algorithm} {})", setting % 100)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_units() {
        let cases = [
            (0, "0 B"),
            (999, "999 B"),
            (1000, "1.00 kB"),
            (1234, "1.23 kB"),
            (45_600_000, "45.6 MB"),
            (999_600, "1.00 MB"),
            (123_456_789_012, "123 GB"),
        ];
        for (n, text) in cases {
            assert_eq!(bytes(n), text, "{n} bytes");
        }
    }

    #[test]
    fn counts_and_ratios() {
        for (n, text) in [(0, "0"), (999, "999"), (1000, "1,000"), (1_234_567, "1,234,567")] {
            assert_eq!(count(n), text);
        }
        assert_eq!(ratio(div(10, 4)), "2.50");
        assert_eq!(ratio(div(1, 0)), "-");
        assert_eq!(compression(505), "505 (zstd 5)");
        assert_eq!(compression(0), "0 (uncompressed)");
    }
}
