//! The medians the runner, gate and report use, by what they are for: one place, two meanings.

/// The median: the middle value, or the mean of the two middle values of an even count. For
/// figures a statistic is computed from (ratios, times, spreads). `None` when empty.
pub fn median(mut values: Vec<f64>) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(values[n / 2]),
        _ => Some((values[n / 2 - 1] + values[n / 2]) / 2.0),
    }
}

/// [`median`], NaN when empty: for a figure a table shows (an empty cell prints as such).
pub fn median_or_nan(values: Vec<f64>) -> f64 {
    median(values).unwrap_or(f64::NAN)
}

/// The upper of the two middle values (the middle one of an odd count): a value one of them
/// really had. For a figure shown as "the median process's" (a sample's time, a comparison's
/// detectable change), which should be one that was measured. `None` when empty.
pub fn upper_median(mut values: Vec<f64>) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_two_medians_differ_only_on_an_even_count() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(upper_median(vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(upper_median(vec![4.0, 1.0, 2.0, 3.0]), Some(3.0));
        assert_eq!((median(Vec::new()), upper_median(Vec::new())), (None, None));
    }
}
