//! C++ type-name helpers (spec "Type Name Normalization").

/// Splits `ns::tmpl<A,B<C>,D>` into (`ns::tmpl`, [`A`, `B<C>`, `D`]).
/// Returns `None` when the name has no template arguments.
pub fn split_template(name: &str) -> Option<(&str, Vec<&str>)> {
    let name = name.trim();
    let open = name.find('<')?;
    if !name.ends_with('>') {
        return None;
    }
    let inner = &name[open + 1..name.len() - 1];
    let mut args = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, ch) in inner.char_indices() {
        match ch {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                args.push(inner[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    args.push(inner[start..].trim());
    Some((name[..open].trim(), args))
}

/// The template name without its arguments (`std::vector<float>` → `std::vector`).
pub fn template_name(name: &str) -> &str {
    match name.find('<') {
        Some(i) => name[..i].trim(),
        None => name.trim(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_nested_templates() {
        let (t, a) = split_template("std::map<std::string,std::vector<std::pair<int,float>>>").expect("template");
        assert_eq!(t, "std::map");
        assert_eq!(a, vec!["std::string", "std::vector<std::pair<int,float>>"]);
        assert!(split_template("float").is_none());
        assert_eq!(template_name("std::array<float,3>"), "std::array");
    }
}
