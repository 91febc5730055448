//! The report generator on a fixed results JSON: the expected tables (golden file, rewritten
//! with `TDBENCH_BLESS=1`), a PNG of the expected size that is not blank, and a missing
//! implementation reported as missing rather than drawn as zero.

use std::path::PathBuf;

use tdbench_contract::Operation;
use tdbench_scripts::report;
use tdbench_scripts::results::Results;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

fn results() -> Results {
    serde_json::from_str(&std::fs::read_to_string(fixture("results.json")).unwrap()).unwrap()
}

#[test]
fn tables_match_the_golden_file() {
    let results = results();
    let text = report::render(&report::Figures::of(&results), None);
    let golden = fixture("report.md");
    if std::env::var_os("TDBENCH_BLESS").is_some() {
        std::fs::write(&golden, &text).unwrap();
    }
    assert_eq!(text, std::fs::read_to_string(&golden).unwrap(), "report changed: review, then TDBENCH_BLESS=1 to accept");
}

#[test]
fn a_missing_implementation_is_said_to_be_missing() {
    let results = results();
    let text = report::render(&report::Figures::of(&results), None);
    let lane = text.split("### ~vector-int").nth(1).expect("vector-int section");
    let table = lane.split("\n\n").nth(1).unwrap();
    assert!(table.contains("| tl | missing from this run's results |"), "{table}");
    let status = text.split("### ~status").nth(1).unwrap().split("### ").next().unwrap();
    assert!(status.contains("| tl | 20 |"), "tl is present for status: {status}");
}

#[test]
fn the_chart_has_the_expected_size_and_is_not_blank() {
    let results = results();
    let dir = std::env::temp_dir().join(format!("tdbench-report-{}", std::process::id()));
    report::write(&results, &dir).unwrap();
    let png = std::fs::read(dir.join("throughput.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    // IHDR: width and height, big-endian, at bytes 16..24.
    let width = u32::from_be_bytes(png[16..20].try_into().unwrap());
    let height = u32::from_be_bytes(png[20..24].try_into().unwrap());
    assert_eq!((width, height), (1600, 1000));
    let image = decode_rgb(&dir.join("throughput.png"));
    let mut colours: Vec<[u8; 3]> = image.chunks(3).map(|p| [p[0], p[1], p[2]]).collect();
    colours.sort_unstable();
    colours.dedup();
    assert!(colours.len() >= 8, "only {} colours: the chart is blank", colours.len());
    // The implementations' bar colours are there (json red, tl purple, clone grey).
    for colour in [[214, 39, 40], [148, 103, 189], [127, 127, 127]] {
        assert!(colours.binary_search(&colour).is_ok(), "no {colour:?} bars");
    }
    assert!(dir.join("README.md").exists() && dir.join("results.json").exists());
    // The size chart: the formats' bars (json red, tl purple).
    let sizes = decode_rgb(&dir.join("size.png"));
    let mut colours: Vec<[u8; 3]> = sizes.chunks(3).map(|p| [p[0], p[1], p[2]]).collect();
    colours.sort_unstable();
    colours.dedup();
    for colour in [[214, 39, 40], [148, 103, 189]] {
        assert!(colours.binary_search(&colour).is_ok(), "no {colour:?} bars in size.png");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

fn decode_rgb(path: &std::path::Path) -> Vec<u8> {
    image::open(path).expect("the chart is a valid PNG").to_rgb8().into_raw()
}

#[test]
fn tdlib_round_trips_get_their_own_table_with_the_empty_call_as_floor() {
    // A real run's results (`--data string-64k,bytes-64k,vector-int,vector-object --serializer
    // json,tdlib-json --no-baseline`), batches trimmed.
    let results: Results = serde_json::from_str(&std::fs::read_to_string(fixture("tdlib-results.json")).unwrap()).unwrap();
    let figures = report::Figures::of(&results);
    let text = report::render(&figures, None);
    let per_lane = text.split("## TDLib round trips").next().unwrap();
    assert!(!per_lane.contains("tdlib-json |"), "round trips stay out of the format tables and the chart");
    let section = text.split("## TDLib round trips").nth(1).expect("a TDLib section");
    let round_trip = |lane: &str| figures.cell(lane, "tdlib-json", Operation::RoundTrip).expect("measured").ns_per_op;
    let floor = ["string-64k", "bytes-64k", "vector-int", "vector-object"]
        .iter()
        .map(|lane| figures.cell(lane, "tdlib-json", Operation::EmptyCall).expect("measured").ns_per_op)
        .fold(f64::MAX, f64::min);
    let derived = format!(
        "| tdlib-json | {:.1} | {:.1} | {:.1} |",
        (round_trip("bytes-64k") - round_trip("string-64k")) / 64.0,
        (round_trip("vector-int") - floor) / 1000.0,
        (round_trip("vector-object") - floor) / 1000.0
    );
    assert!(section.contains(&derived), "expected {derived} in\n{section}");
    assert!(section.contains("| empty call (floor) |"), "{section}");
}

#[test]
fn the_published_copy_reads_back_as_the_run_without_its_batches() {
    let mut results = results();
    // Samples of one provenance but for one, whose nonce is not the run's: a run the gate
    // refused, which the copy must still keep whole.
    let odd = results.samples.len() / 2;
    results.samples[odd].nonce = "another run".into();
    let dir = std::env::temp_dir().join(format!("tdbench-published-{}", std::process::id()));
    report::write(&results, &dir).unwrap();
    let published = std::fs::read_to_string(dir.join("results.json")).unwrap();
    assert!(!published.contains("batches_ns_per_op"), "batches published");
    // The machine is named once by the provenance and once by the odd sample's own.
    assert_eq!(published.matches("\"machine\"").count(), 2, "each sample names its machine");
    assert_eq!(published.matches("\"own_provenance\"").count(), 1);
    let read = tdbench_scripts::files::read_results(&dir.join("results.json")).unwrap();
    for sample in &mut results.samples {
        for op in &mut sample.operations {
            op.batches_ns_per_op.clear();
        }
    }
    assert!(read.samples == results.samples, "the samples read back differ");
    assert_eq!(read.comparisons, results.comparisons);
    // And the report drawn from the published copy is the report drawn from the run.
    assert_eq!(report::render(&report::Figures::of(&read), None), report::render(&report::Figures::of(&results), None));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A published copy written before samples were grouped (one object per sample, the fields
/// it shares with the provenance left out) still reads: a report folder keeps its copy.
#[test]
fn a_published_copy_of_the_older_form_still_reads() {
    let results = results();
    let mut value = serde_json::to_value(&results).unwrap();
    for sample in value["samples"].as_array_mut().unwrap() {
        let sample = sample.as_object_mut().unwrap();
        for key in ["schema_version", "nonce", "machine", "settings", "tree"] {
            sample.remove(key);
        }
    }
    let path = std::env::temp_dir().join(format!("tdbench-older-published-{}.json", std::process::id()));
    std::fs::write(&path, serde_json::to_string(&value).unwrap()).unwrap();
    let read = tdbench_scripts::files::read_results(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert!(read.samples == results.samples, "the samples read back differ");
}

#[test]
fn where_the_time_goes_shows_each_profile_by_category() {
    let mut results = results();
    let callgrind = "events: Ir\nfn=(1) tdbench_models::td_json::reader::number::<impl X>::number_token\n1 300\nfn=(2) malloc\n1 100\n";
    let payloads = results.samples.iter().find(|s| s.lane == "status").unwrap().corpus.lane_payloads as u64;
    let profile = tdbench_scripts::profile::Profile::of("status", "json-td", Operation::Decode, callgrind, payloads).unwrap();
    results.profiles.push(profile);
    let text = report::render(&report::Figures::of(&results), None);
    let section = text.split("## Where the time goes").nth(1).expect("the section");
    let row = section.lines().find(|l| l.starts_with("| json-td on ~status")).unwrap_or_else(|| panic!("{section}"));
    assert!(row.contains("| 75% |") && row.contains("| 25% |") && row.contains("`X::number_token` 75%"), "{row}");
}

/// The report leads with the answer: what each format costs on the realistic lanes, before the
/// charts, and the gate's verdict in a few lines with every comparison in `gate.md`. (The
/// answer began at line 343 of 740, after the gate's table of an A/A run.)
#[test]
fn the_report_leads_with_what_each_format_costs_and_keeps_the_gate_short() {
    // The fixture's `status` lane as `message`, one of the lanes the answer is about.
    let text = std::fs::read_to_string(fixture("results.json")).unwrap().replace("\"status\"", "\"message\"");
    let mut results: Results = serde_json::from_str(&text).unwrap();
    // As a run against a baseline: the gate has a verdict to give.
    results.provenance.baseline = Some(results.provenance.current.clone());
    let figures = report::Figures::of(&results);
    let text = report::render(&figures, None);
    let answer = text.split("## What each format costs\n").nth(1).expect("the answer section");
    assert!(text.find("## What each format costs") < text.find("![Speed"), "the answer comes before the charts");
    let table: Vec<&str> = answer.lines().filter(|l| l.starts_with("| message |")).collect();
    assert_eq!(table.len(), 2, "one row per codec (json, tl), none for floors: {table:?}");
    assert!(table[0].starts_with("| message | json |") && table[0].ends_with("| 1× | 1× |"), "{}", table[0]);
    assert!(table[1].starts_with("| message | tl |") && table[1].contains('–'), "tl with an interval: {}", table[1]);
    let gate = text.split("## Gate:").nth(1).unwrap().split("\n## ").next().unwrap();
    assert!(gate.lines().filter(|l| !l.trim().is_empty()).count() <= 10, "{gate}");
    assert!(gate.contains("[gate.md](gate.md)"), "{gate}");
    assert!(report::gate(&figures).contains("| lane | implementation |"), "gate.md has every comparison");
}
