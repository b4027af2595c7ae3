//! `lossless sweep merge`: the row files of a sweep's shares (`--shard I/N`, run on other
//! processes or machines) joined into the report one process would have written.
//!
//! Every share names the whole sweep (file, key, every value, the metrics asked for), so
//! a file of another sweep is refused, a value run twice (shares that overlap) is refused
//! naming both files, and a value no file holds is named with the share that runs it.

use super::{Shard, SweepReport, SweepRow};

/// Join the shares `parts` (each with the name of the file it came from) into one
/// report, rows in the order of the sweep's values.
pub fn merge(parts: Vec<(String, SweepReport)>) -> Result<SweepReport, String> {
    let mut parts = parts.into_iter();
    let (first_name, first) = parts.next().ok_or("no row files given")?;
    let count = first.shard.map(|s| s.count);
    let mut stopped: Vec<(String, String)> = Vec::new();
    if let Some(sig) = &first.interrupted {
        stopped.push((first_name.clone(), sig.clone()));
    }
    let mut rows: Vec<Option<(String, SweepRow)>> = vec![None; first.values.len()];
    let mut take = |name: &str, rows_of: Vec<SweepRow>| -> Result<(), String> {
        for row in rows_of {
            if first.values.get(row.index) != Some(&row.value) {
                return Err(format!(
                    "{name}: its row for `{}` (value {} of the sweep) is not a value of the sweep at that place",
                    row.value,
                    row.index + 1
                ));
            }
            let slot = &mut rows[row.index];
            if let Some((other, _)) = slot {
                return Err(format!(
                    "{name} and {other} both ran {}={}: the shares overlap (give each --shard I/N once, with the same N)",
                    first.key, row.value
                ));
            }
            *slot = Some((name.to_string(), row));
        }
        Ok(())
    };
    take(&first_name, first.rows.clone())?;
    for (name, p) in parts {
        if p.file != first.file
            || p.key != first.key
            || p.values != first.values
            || p.metric_paths != first.metric_paths
        {
            return Err(format!(
                "{name} is a share of another sweep than {first_name}: {} over {}={} with metrics {:?}, not {} over {}={} with metrics {:?}",
                p.file,
                p.key,
                p.values.join(","),
                p.metric_paths,
                first.file,
                first.key,
                first.values.join(","),
                first.metric_paths
            ));
        }
        if let (Some(a), Some(b)) = (count, p.shard.map(|s| s.count)) {
            if a != b {
                return Err(format!(
                    "{name} is one of {b} shares and {first_name} one of {a}: shares of one sweep split it alike"
                ));
            }
        }
        if let Some(sig) = &p.interrupted {
            stopped.push((name.clone(), sig.clone()));
        }
        take(&name, p.rows)?;
    }
    let missing: Vec<String> = rows
        .iter()
        .enumerate()
        .filter(|(_, r)| r.is_none())
        .map(|(k, _)| {
            let share = count.map_or(String::new(), |n| format!(" (share {}/{n})", k % n));
            format!("{}{share}", first.values[k])
        })
        .collect();
    if !missing.is_empty() {
        let stopped: Vec<String> = stopped
            .iter()
            .map(|(name, sig)| format!("{name} was stopped by {sig} before its end"))
            .collect();
        return Err(format!(
            "no row file holds {}={}: run the shares that hold them and merge again{}",
            first.key,
            missing.join(", "),
            if stopped.is_empty() {
                String::new()
            } else {
                format!(" ({})", stopped.join("; "))
            }
        ));
    }
    Ok(SweepReport {
        file: first.file,
        key: first.key,
        values: first.values,
        metric_paths: first.metric_paths,
        shard: None::<Shard>,
        rows: rows.into_iter().flatten().map(|(_, r)| r).collect(),
        interrupted: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::SweepColumn;
    use serde_json::json;

    fn share(index: usize, count: usize, values: &[&str]) -> SweepReport {
        let rows = values
            .iter()
            .enumerate()
            .filter(|(k, _)| k % count == index)
            .map(|(k, v)| SweepRow {
                index: k,
                value: v.to_string(),
                metrics: [("totals.drops".to_string(), json!(k * 10))].into(),
                columns: vec![SweepColumn {
                    metric: 0,
                    name: "totals.drops".into(),
                }],
            })
            .collect();
        SweepReport {
            file: "f.yaml".into(),
            key: "seed".into(),
            values: values.iter().map(|v| v.to_string()).collect(),
            metric_paths: vec!["totals.drops".into()],
            shard: Some(Shard { index, count }),
            rows,
            interrupted: None,
        }
    }

    const VALUES: [&str; 5] = ["1", "2", "3", "4", "5"];

    #[test]
    fn shares_in_any_order_join_into_the_whole_sweep() {
        let whole = SweepReport {
            shard: None,
            ..share(0, 1, &VALUES)
        };
        let parts = vec![
            ("b".to_string(), share(2, 3, &VALUES)),
            ("a".to_string(), share(0, 3, &VALUES)),
            ("c".to_string(), share(1, 3, &VALUES)),
        ];
        assert_eq!(merge(parts).unwrap(), whole);
        // One file of the whole sweep merges to itself.
        assert_eq!(merge(vec![("w".into(), whole.clone())]).unwrap(), whole);
    }

    /// The error merging `parts` (named files and their shares) gives.
    fn merge_error(parts: Vec<(&str, SweepReport)>) -> String {
        let named = parts.into_iter().map(|(n, r)| (n.to_string(), r)).collect();
        merge(named).unwrap_err()
    }

    #[test]
    fn missing_overlapping_and_foreign_shares_are_named() {
        let e = merge_error(vec![
            ("a", share(0, 3, &VALUES)),
            ("c", share(2, 3, &VALUES)),
        ]);
        assert!(e.contains("seed=2 (share 1/3), 5 (share 1/3)"), "{e}");
        let e = merge_error(vec![
            ("a", share(0, 2, &VALUES)),
            ("b", share(0, 2, &VALUES)),
        ]);
        assert!(e.contains("b and a both ran seed=1"), "{e}");
        let mut other = share(1, 2, &VALUES);
        other.key = "links.0.cable".into();
        let e = merge_error(vec![("a", share(0, 2, &VALUES)), ("o", other)]);
        assert!(e.contains("o is a share of another sweep than a"), "{e}");
        let e = merge_error(vec![
            ("a", share(0, 2, &VALUES)),
            ("t", share(1, 3, &VALUES)),
        ]);
        assert!(e.contains("one of 3 shares and a one of 2"), "{e}");
        let mut moved = share(1, 2, &VALUES);
        moved.rows[0].index = 0;
        let e = merge_error(vec![("m", moved)]);
        assert!(e.contains("m: its row for `2`"), "{e}");
        assert!(merge(Vec::new()).is_err());
    }

    #[test]
    fn shards_parse_as_i_of_n_from_zero() {
        let s: Shard = "2/4".parse().unwrap();
        assert_eq!(s, Shard { index: 2, count: 4 });
        assert!(s.takes(2) && s.takes(6) && !s.takes(3));
        for bad in ["4/4", "1/0", "x/2", "3", "-1/2"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
        assert!("4/4".parse::<Shard>().unwrap_err().contains("0 to 3"));
    }
}
