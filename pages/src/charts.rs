//! Inline SVG bar charts: geometry computed here, drawn by the templates.
//!
//! Coordinates are formatted to one decimal so the markup is byte-stable.
//! Every bar carries its value as text too, so a printed page or a reader
//! who cannot tell the colours apart loses nothing.

use serde::Serialize;

#[derive(Debug, Serialize)]
pub struct Chart {
    pub width: u32,
    pub height: u32,
    /// What the chart shows, for assistive technology and the caption.
    pub label: String,
    pub grid: Vec<GridLine>,
    pub groups: Vec<GroupLabel>,
    pub bars: Vec<Bar>,
    pub legend: Vec<LegendItem>,
    pub axis_y: String,
    pub tick_x: String,
    pub left: String,
    pub right: String,
}

#[derive(Debug, Serialize)]
pub struct GridLine {
    pub y: String,
    pub label: String,
}

#[derive(Debug, Serialize)]
pub struct GroupLabel {
    pub x: String,
    pub y: String,
    pub label: String,
}

#[derive(Debug, Serialize)]
pub struct Bar {
    pub x: String,
    pub y: String,
    pub w: String,
    pub h: String,
    /// CSS class of the series (`s0`, `s1`, ...).
    pub class: String,
    pub value: String,
    pub text_x: String,
    pub text_y: String,
    /// Spoken description: `Effect-aware precision 1.000`.
    pub title: String,
}

#[derive(Debug, Serialize)]
pub struct LegendItem {
    pub x: String,
    pub y: String,
    pub text_x: String,
    pub text_y: String,
    pub class: String,
    pub label: String,
}

/// One group of bars (a detector) with one value per series; `None` draws
/// no bar and writes `n/a`.
pub struct Group {
    pub label: String,
    pub values: Vec<Option<f64>>,
}

fn f(x: f64) -> String {
    format!("{x:.1}")
}

/// A grouped vertical bar chart of values in [0, 1].
pub fn grouped(label: &str, series: &[&str], groups: &[Group]) -> Chart {
    let n_series = series.len().max(1) as f64;
    let group_w: f64 = (40.0 + 44.0 * n_series).max(150.0);
    let (left, right, top, bottom) = (44.0, 16.0, 46.0, 40.0);
    let plot_h = 180.0;
    let plot_w = group_w * groups.len().max(1) as f64;
    let width = left + plot_w + right;
    let height = top + plot_h + bottom;
    let y_of = |v: f64| top + plot_h * (1.0 - v.clamp(0.0, 1.0));

    let grid = [0.0, 0.25, 0.5, 0.75, 1.0]
        .iter()
        .map(|v| GridLine {
            y: f(y_of(*v)),
            label: format!("{v:.2}"),
        })
        .collect();
    let bar_w = 36.0;
    let mut bars = Vec::new();
    let mut labels = Vec::new();
    for (g, group) in groups.iter().enumerate() {
        let x0 = left + group_w * g as f64;
        let inner = bar_w * n_series + 6.0 * (n_series - 1.0);
        let start = x0 + (group_w - inner) / 2.0;
        labels.push(GroupLabel {
            x: f(x0 + group_w / 2.0),
            y: f(top + plot_h + 18.0),
            label: group.label.clone(),
        });
        for (s, name) in series.iter().enumerate() {
            let x = start + (bar_w + 6.0) * s as f64;
            let value = group.values.get(s).copied().flatten();
            let (y, h, text) = match value {
                Some(v) => (y_of(v), plot_h * v.clamp(0.0, 1.0), format!("{v:.3}")),
                None => (y_of(0.0), 0.0, "n/a".to_string()),
            };
            bars.push(Bar {
                x: f(x),
                y: f(y),
                w: f(bar_w),
                h: f(h),
                class: format!("s{s}"),
                text_x: f(x + bar_w / 2.0),
                text_y: f(y - 4.0),
                title: format!("{} {} {}", group.label, name, text),
                value: text,
            });
        }
    }
    let legend = series
        .iter()
        .enumerate()
        .map(|(s, name)| {
            let x = left + 96.0 * s as f64;
            LegendItem {
                x: f(x),
                y: "8.0".into(),
                text_x: f(x + 16.0),
                text_y: "18.0".into(),
                class: format!("s{s}"),
                label: (*name).to_string(),
            }
        })
        .collect();
    Chart {
        width: width.ceil() as u32,
        height: height.ceil() as u32,
        label: label.to_owned(),
        grid,
        groups: labels,
        bars,
        legend,
        axis_y: f(y_of(0.0)),
        tick_x: f(left - 6.0),
        left: f(left),
        right: f(left + plot_w),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_scale_to_the_plot_and_missing_values_say_so() {
        let chart = grouped(
            "test",
            &["precision", "recall"],
            &[Group {
                label: "a".into(),
                values: vec![Some(1.0), None],
            }],
        );
        assert_eq!(chart.bars.len(), 2);
        assert_eq!(chart.bars[0].h, "180.0");
        assert_eq!(chart.bars[1].h, "0.0");
        assert_eq!(chart.bars[1].value, "n/a");
        assert_eq!(chart.grid.len(), 5);
    }
}
