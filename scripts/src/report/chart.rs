//! `report/throughput.png` and `report/size.png`: grouped bars per lane, one bar per
//! implementation in a fixed colour, on a log axis of ratios to `json` (lanes differ by orders of
//! magnitude in ns/op and bytes, ratios do not): how many times faster (encode and decode
//! panels, each bar with its 95% interval outlined), and how large the encoding is, as is and
//! compressed. Missing figures are marked
//! `n/a`, never drawn as zero.

use std::path::Path;
use std::sync::Once;
use tdbench_contract::Operation;

use plotters::prelude::*;
use plotters::style::FontStyle;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::Figures;

const WIDTH: u32 = 1600;
const HEIGHT: u32 = 1000;
/// The row under the title that holds the legend.
const LEGEND_HEIGHT: u32 = 32;

fn colour(implementation: &str, index: usize) -> RGBColor {
    match implementation {
        "json" => RGBColor(214, 39, 40),
        "json-td" => RGBColor(255, 127, 14),
        "json-value" => RGBColor(140, 86, 75),
        "json-sonic" => RGBColor(227, 119, 194),
        "json-simd" => RGBColor(0, 0, 128),
        "protobuf" => RGBColor(31, 119, 180),
        "msgpack" => RGBColor(44, 160, 44),
        "tl" => RGBColor(148, 103, 189),
        "bincode" => RGBColor(188, 189, 34),
        "tdlib" => RGBColor(23, 190, 207),
        "clone" => RGBColor(127, 127, 127),
        "validated-clone" => RGBColor(95, 95, 95),
        "memcpy" => RGBColor(60, 60, 60),
        _ => [RGBColor(255, 187, 120), RGBColor(152, 223, 138), RGBColor(197, 176, 213)][index % 3],
    }
}

fn register_font() {
    static FONT: Once = Once::new();
    FONT.call_once(|| {
        plotters::style::register_font("sans-serif", FontStyle::Normal, ttf_noto_sans::REGULAR)
            .unwrap_or_else(|_| panic!("the bundled Noto Sans font is valid"));
    });
}

/// `2026-11-29` from unix seconds (proleptic Gregorian, UTC).
pub fn date(unix: u64) -> String {
    let days = (unix / 86_400) as i64 + 719_468;
    let era = days.div_euclid(146_097);
    let day_of_era = days - era * 146_097;
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// An implementation's figure on a lane, and whether it should have one.
type Figure<'a> = &'a dyn Fn(&str, &str) -> (Option<f64>, bool);

/// One panel of grouped bars: per lane, one bar per implementation, `value` on a log axis
/// between `low` and `high`, a line at 1, `n/a` where a figure that should exist is missing.
struct Panel<'a> {
    caption: &'a str,
    y_desc: &'a str,
    value: Figure<'a>,
    /// The figure's 95% interval, drawn as an outlined box around the bar's end.
    interval: Option<Interval<'a>>,
}

/// An implementation's interval on a lane, when it has one.
type Interval<'a> = &'a dyn Fn(&str, &str) -> Option<(f64, f64)>;

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    figures: &Figures,
    implementations: &[String],
    panel: &Panel,
    (low, high): (f64, f64),
) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| format!("drawing {}: {e}", panel.caption);
    let lanes = &figures.lanes;
    let slots = implementations.len() + 1;
    let x_range = 0..(lanes.len() * slots) as i32;
    let mut chart = ChartBuilder::on(area)
        .caption(panel.caption, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(70)
        .build_cartesian_2d(x_range, (low..high).log_scale())
        .map_err(|e| err(&e))?;
    let middle = implementations.len() as i32 / 2;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(lanes.len() * slots)
        .x_label_formatter(&|x| {
            let (lane, slot) = (*x as usize / slots, *x % slots as i32);
            if slot == middle { lanes.get(lane).map_or(String::new(), |l| figures.lane_label(l)) } else { String::new() }
        })
        .x_label_style(("sans-serif", 15))
        .y_desc(panel.y_desc)
        .y_label_style(("sans-serif", 15))
        .y_label_formatter(&|y| {
            if !is_one_two_or_five(*y) {
                // Every step of a decade has its line; labelled, 0.6–0.9 ran into each other.
                String::new()
            } else if *y >= 10.0 {
                format!("{y:.0}×")
            } else if *y >= 0.1 {
                format!("{y:.1}×")
            } else {
                format!("{y:.2}×")
            }
        })
        .draw()
        .map_err(|e| err(&e))?;
    for (index, implementation) in implementations.iter().enumerate() {
        let colour = colour(implementation, index);
        let bars: Vec<Rectangle<(i32, f64)>> = lanes
            .iter()
            .enumerate()
            .filter_map(|(l, lane)| {
                let value = (panel.value)(lane, implementation).0?;
                let x = (l * slots + index) as i32;
                Some(Rectangle::new([(x, low), (x + 1, value)], colour.filled()))
            })
            .collect();
        chart.draw_series(bars).map_err(|e| err(&e))?;
        if let Some(interval) = panel.interval {
            let boxes: Vec<Rectangle<(i32, f64)>> = lanes
                .iter()
                .enumerate()
                .filter_map(|(l, lane)| {
                    let (lo, hi) = interval(lane, implementation)?;
                    let x = (l * slots + index) as i32;
                    Some(Rectangle::new([(x, lo.max(low)), (x + 1, hi.min(high))], BLACK.stroke_width(1)))
                })
                .collect();
            chart.draw_series(boxes).map_err(|e| err(&e))?;
        }
        // A figure the run does not have is said so where its bar would stand.
        let missing: Vec<Text<(i32, f64), String>> = lanes
            .iter()
            .enumerate()
            .filter(|(_, lane)| matches!((panel.value)(lane, implementation), (None, true)))
            .map(|(l, _)| Text::new("n/a".to_string(), ((l * slots + index) as i32, low * 1.15), ("sans-serif", 11).into_font()))
            .collect();
        chart.draw_series(missing).map_err(|e| err(&e))?;
    }
    chart
        .draw_series(std::iter::once(PathElement::new(vec![(0, 1.0), ((lanes.len() * slots) as i32, 1.0)], BLACK.stroke_width(1))))
        .map_err(|e| err(&e))?;
    Ok(())
}

/// The key, one row across the top of the picture: inside a panel it hid the first lane's bars.
fn draw_legend<DB: DrawingBackend>(area: &DrawingArea<DB, plotters::coord::Shift>, implementations: &[String]) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| format!("drawing the legend: {e}");
    let font = TextStyle::from(("sans-serif", 15).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    let (width, height) = area.dim_in_pixel();
    let swatch = 14;
    let gap = 24;
    let widths: Vec<u32> = implementations
        .iter()
        .map(|name| area.estimate_text_size(name, &font).map(|(w, _)| swatch + 6 + w))
        .collect::<Result<_, _>>()
        .map_err(|e| err(&e))?;
    let total = widths.iter().sum::<u32>() + gap * widths.len().saturating_sub(1) as u32;
    let mut x = width.saturating_sub(total) as i32 / 2;
    let y = height as i32 / 2;
    for (index, (name, w)) in implementations.iter().zip(widths).enumerate() {
        let colour = colour(name, index);
        area.draw(&Rectangle::new([(x, y - 7), (x + swatch as i32, y + 7)], colour.filled())).map_err(|e| err(&e))?;
        let text = Text::new(name.as_str(), (x + swatch as i32 + 6, y), font.clone());
        area.draw(&text).map_err(|e| err(&e))?;
        x += (w + gap) as i32;
    }
    Ok(())
}

/// Whether `y` is 1, 2 or 5 times a power of ten: the axis labels of a log scale.
fn is_one_two_or_five(y: f64) -> bool {
    let mantissa = y / 10f64.powf(y.log10().floor());
    [1.0, 2.0, 5.0, 10.0].iter().any(|m| (mantissa - m).abs() < 1e-6 * m)
}

/// The log axis's ends around `values` (and 1), with room above and below.
fn log_range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let all: Vec<f64> = values.filter(|v| v.is_finite() && *v > 0.0).collect();
    (all.iter().copied().fold(1.0, f64::min) / 1.6, all.iter().copied().fold(1.0, f64::max) * 1.6)
}

fn titled<'a>(path: &'a Path, figures: &Figures, what: &str) -> Result<DrawingArea<BitMapBackend<'a>, plotters::coord::Shift>, String> {
    register_font();
    let err = |e: &dyn std::fmt::Display| format!("drawing {}: {e}", path.display());
    let root = BitMapBackend::new(path, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let machine =
        figures.results.provenance.machine.as_ref().map_or("unknown machine".to_string(), |m| format!("{}, {} cores", m.cpu, m.cores));
    let title = format!("tdbench — {what} — {machine} — {}", date(figures.results.provenance.merged_at_unix));
    root.titled(&title, ("sans-serif", 26)).map_err(|e| err(&e))
}

/// Below the title: the legend's row, then `panels` panels of equal height.
fn keyed_panels<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    implementations: &[String],
    panels: usize,
) -> Result<Vec<DrawingArea<DB, plotters::coord::Shift>>, String> {
    let (key, body) = root.split_vertically(LEGEND_HEIGHT);
    draw_legend(&key, implementations)?;
    Ok(body.split_evenly((panels, 1)))
}

/// `throughput.png`: how many times faster than `json`, encode and decode panels.
pub fn draw(figures: &Figures, path: &Path) -> Result<(), String> {
    let root = titled(path, figures, "times faster than json (log scale)")?;
    // One copy floor is enough for scale: the per-format copies are what each encoder's `vs
    // floor` cell in the tables divides by, not a bar of their own beside json's.
    let implementations: &Vec<String> =
        &figures.implementations.iter().filter(|i| !figures.is_copy_floor(i) || *i == "memcpy").cloned().collect();
    let speedup = |operation: Operation| {
        move |lane: &str, implementation: &str| {
            (figures.speedup(lane, implementation, operation), figures.has_operation(implementation, operation))
        }
    };
    let values = figures.lanes.iter().flat_map(|l| {
        implementations.iter().flat_map(move |i| [Operation::Encode, Operation::Decode].map(|op| figures.speedup(l, i, op))).flatten()
    });
    let range = log_range(values);
    let (encode, decode) = (speedup(Operation::Encode), speedup(Operation::Decode));
    let interval = |operation: Operation| {
        move |lane: &str, implementation: &str| {
            (implementation != "json").then(|| figures.speedup_interval(lane, implementation, operation)).flatten().map(|r| (r.low, r.high))
        }
    };
    let (encode_interval, decode_interval) = (interval(Operation::Encode), interval(Operation::Decode));
    let panels = keyed_panels(&root, implementations, 2)?;
    let panel = |caption, value, interval| Panel { caption, y_desc: "× json", value, interval: Some(interval) };
    draw_panel(&panels[0], figures, implementations, &panel("encode", &encode, &encode_interval), range)?;
    draw_panel(&panels[1], figures, implementations, &panel("decode", &decode, &decode_interval), range)?;
    root.present().map_err(|e| format!("drawing {}: {e}", path.display()))
}

/// `size.png`: each format's encoded size per payload as a share of `json`'s, as is and
/// compressed alone with gzip (level 6) and zstd (level 3): what a message weighs on the wire.
pub fn draw_sizes(figures: &Figures, path: &Path) -> Result<(), String> {
    let root = titled(path, figures, "encoded size per payload ÷ json's uncompressed size (log scale)")?;
    // Formats only: the floors encode nothing of their own (a `memcpy` floor copies a format's bytes).
    let formats: Vec<String> = figures
        .implementations
        .iter()
        .filter(|i| figures.has_operation(i, Operation::Encode) && !figures.is_copy_floor(i))
        .cloned()
        .collect();
    let share = |size: fn(super::Cell) -> Option<f64>| {
        move |lane: &str, implementation: &str| {
            let json = figures.cell(lane, "json", Operation::Encode).map(|c| c.encoded_bytes);
            let this = figures.cell(lane, implementation, Operation::Encode).and_then(size);
            (json.zip(this).map(|(json, this)| this / json).filter(|r| r.is_finite() && *r > 0.0), true)
        }
    };
    let raw = share(|c| Some(c.encoded_bytes));
    let gzip = share(|c| c.compressed.map(|z| z.gzip_bytes));
    let zstd = share(|c| c.compressed.map(|z| z.zstd_bytes));
    let values = figures.lanes.iter().flat_map(|l| formats.iter().flat_map(move |i| [raw(l, i).0, gzip(l, i).0, zstd(l, i).0]).flatten());
    let range = log_range(values.collect::<Vec<_>>().into_iter());
    let panels = keyed_panels(&root, &formats, 3)?;
    draw_panel(&panels[0], figures, &formats, &Panel { caption: "as encoded", y_desc: "÷ json", value: &raw, interval: None }, range)?;
    draw_panel(&panels[1], figures, &formats, &Panel { caption: "gzip -6", y_desc: "÷ json", value: &gzip, interval: None }, range)?;
    draw_panel(&panels[2], figures, &formats, &Panel { caption: "zstd -3", y_desc: "÷ json", value: &zstd, interval: None }, range)?;
    root.present().map_err(|e| format!("drawing {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_log_axis_labels_one_two_and_five() {
        for y in [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 100.0, 0.3 - 0.1] {
            assert!(super::is_one_two_or_five(y), "{y}");
        }
        for y in [0.03, 0.3, 0.6, 0.9, 3.0, 7.0, 40.0, 1.5] {
            assert!(!super::is_one_two_or_five(y), "{y}");
        }
    }

    #[test]
    fn dates() {
        assert_eq!(super::date(0), "1970-01-01");
        assert_eq!(super::date(1_764_374_400), "2025-11-29");
        assert_eq!(super::date(951_782_400), "2000-02-29");
    }
}
