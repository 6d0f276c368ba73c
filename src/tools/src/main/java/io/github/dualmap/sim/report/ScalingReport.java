package io.github.dualmap.sim.report;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

import io.github.dualmap.sim.ScalingTimeline;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.lines.SeriesLines;
import org.knowm.xchart.style.markers.SeriesMarkers;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Output of a scheduled run (scale-out, scale-in or slowdown): {@code timeline.json}, the
 * {@code scaleout.png} chart of hit rate and SLO attainment over time with the changes
 * marked, and a markdown table of the windows.
 */
public final class ScalingReport {

	/** Per-window numbers of every policy. */
	public static final String TIMELINE_JSON = "timeline.json";

	/** Hit rate and attainment over time. */
	public static final String CHART = "scaleout.png";

	private static final JsonMapper JSON = JsonMapper.builder().enable(SerializationFeature.INDENT_OUTPUT).build();

	private ScalingReport() {
	}

	/**
	 * The JSON tree: run parameters, then per policy its summary and windows.
	 * @param trace trace name
	 * @param instances instances at the start
	 * @param rate arrival rate in requests per second
	 * @param schedule the {@code --scale} text ({@code ""} without)
	 * @param slowDowns the {@code --slow-down} text ({@code ""} without)
	 */
	public static ObjectNode toJson(String trace, int instances, double rate, String schedule, String slowDowns,
			double sloSeconds, List<ScalingTimeline> timelines) {
		ObjectNode root = JSON.createObjectNode();
		root.put("trace", trace);
		root.put("instances", instances);
		root.put("rate_rps", rate);
		root.put("scale", schedule);
		root.put("slow_down", slowDowns);
		root.put("slo_ttft_s", sloSeconds);
		root.put("window_s", timelines.isEmpty() ? 0 : timelines.get(0).windowSeconds());
		ArrayNode changes = root.putArray("changes_s");
		if (!timelines.isEmpty()) {
			for (double c : timelines.get(0).changeSeconds()) {
				changes.add(ResultsJson.round(c));
			}
		}
		ArrayNode policies = root.putArray("policies");
		for (ScalingTimeline t : timelines) {
			ObjectNode p = policies.addObject();
			p.put("name", t.policy());
			p.put("attainment", ResultsJson.round(t.summary().attainment()));
			p.put("hit_rate", ResultsJson.round(t.summary().hitRate()));
			p.put("ttft_p90_s", ResultsJson.round(t.summary().ttft().p90Seconds()));
			ArrayNode windows = p.putArray("windows");
			for (ScalingTimeline.Window w : t.windows()) {
				ObjectNode o = windows.addObject();
				o.put("start_s", ResultsJson.round(w.startSeconds()));
				o.put("requests", w.requests());
				ResultsJson.putRounded(o, "attainment", w.attainment());
				ResultsJson.putRounded(o, "hit_rate", w.hitRate());
				ResultsJson.putRounded(o, "new_instance_share", w.newInstanceShare());
				o.put("feasible_requests", w.feasible());
				ResultsJson.putRounded(o, "feasible_attainment", w.feasibleAttainment());
				o.put("feasible_prompt_tokens", w.feasibleTokens());
				ResultsJson.putRounded(o, "token_attainment", w.tokenAttainment());
				ArrayNode estimates = o.putArray("cold_ttft_estimate_s");
				for (double e : w.coldTtftEstimates()) {
					if (Double.isNaN(e)) {
						estimates.addNull();
					}
					else {
						estimates.add(ResultsJson.round(e));
					}
				}
			}
		}
		return root;
	}

	/** Writes {@code timeline.json} and {@code scaleout.png} into {@code dir}. */
	public static void write(ObjectNode json, List<ScalingTimeline> timelines, Path dir) throws IOException {
		Files.writeString(dir.resolve(TIMELINE_JSON), JSON.writeValueAsString(json) + System.lineSeparator());
		chart(timelines, dir.resolve(CHART));
	}

	static void chart(List<ScalingTimeline> timelines, Path file) throws IOException {
		System.setProperty("java.awt.headless", "true");
		XYChart hit = panel("Prefix-cache hit rate per window (by arrival)", "hit rate (%)");
		XYChart slo = panel("SLO attainment per window (by arrival)", "requests within SLO (%)");
		for (ScalingTimeline t : timelines) {
			List<Double> x = new ArrayList<>();
			List<Double> hits = new ArrayList<>();
			List<Double> att = new ArrayList<>();
			for (ScalingTimeline.Window w : t.windows()) {
				if (w.requests() == 0 || w.promptTokens() == 0) {
					continue;
				}
				// Plot at the window's middle: the value describes the whole window.
				x.add(w.startSeconds() + t.windowSeconds() / 2);
				hits.add(100 * w.hitRate());
				att.add(100 * w.attainment());
			}
			if (x.isEmpty()) {
				continue;
			}
			hit.addSeries(t.policy(), x, hits).setMarker(SeriesMarkers.CIRCLE);
			slo.addSeries(t.policy(), x, att).setMarker(SeriesMarkers.CIRCLE);
		}
		if (!timelines.isEmpty()) {
			double[] changes = timelines.get(0).changeSeconds();
			// Steps at one instant (two engines slowing down at 50 %) share one line: a
			// chart's series need distinct names.
			Set<String> drawn = new HashSet<>();
			for (int c = 0; c < changes.length; c++) {
				String name = String.format(Locale.ROOT, "change at %.0f s", changes[c]);
				if (!drawn.add(name)) {
					continue;
				}
				for (XYChart chart : List.of(hit, slo)) {
					XYSeries line = chart.addSeries(name, new double[] { changes[c], changes[c] },
							new double[] { 0, 100 });
					line.setMarker(SeriesMarkers.NONE).setLineStyle(SeriesLines.DASH_DASH);
				}
			}
		}
		BitmapEncoder.saveBitmap(List.of(hit, slo), 2, 1, file.toString(), BitmapEncoder.BitmapFormat.PNG);
	}

	private static XYChart panel(String title, String yTitle) {
		XYChart chart = new XYChartBuilder().width(900)
			.height(360)
			.title(title)
			.xAxisTitle("virtual time (s)")
			.yAxisTitle(yTitle)
			.build();
		chart.getStyler().setYAxisMin(0.0).setYAxisMax(100.0);
		return chart;
	}

	/**
	 * Markdown table: one row per window, hit rate, attainment, work in time (the
	 * feasible requests' prompt tokens within the SLO) and share sent to new instances of
	 * each policy side by side.
	 */
	public static String markdown(List<ScalingTimeline> timelines) {
		StringBuilder sb = new StringBuilder("| window start (s) |");
		StringBuilder rule = new StringBuilder("|---:|");
		for (ScalingTimeline t : timelines) {
			sb.append(' ').append(t.policy()).append(" hit | ").append(t.policy()).append(" SLO | ");
			sb.append(t.policy()).append(" work in time | ").append(t.policy()).append(" to new |");
			rule.append("---:|---:|---:|---:|");
		}
		sb.append('\n').append(rule).append('\n');
		int rows = timelines.stream().mapToInt(t -> t.windows().size()).max().orElse(0);
		for (int w = 0; w < rows; w++) {
			double start = timelines.get(0)
				.windows()
				.get(Math.min(w, timelines.get(0).windows().size() - 1))
				.startSeconds();
			sb.append(String.format(Locale.ROOT, "| %.0f |", start));
			for (ScalingTimeline t : timelines) {
				if (w >= t.windows().size()) {
					sb.append(" | | | |");
					continue;
				}
				ScalingTimeline.Window win = t.windows().get(w);
				sb.append(' ')
					.append(percent(win.hitRate()))
					.append(" | ")
					.append(percent(win.attainment()))
					.append(" | ")
					.append(percent(win.tokenAttainment()))
					.append(" | ")
					.append(percent(win.newInstanceShare()))
					.append(" |");
			}
			sb.append('\n');
		}
		return sb.toString();
	}

	private static String percent(double share) {
		return Double.isNaN(share) ? "-" : String.format(Locale.ROOT, "%.1f %%", 100 * share);
	}

}
