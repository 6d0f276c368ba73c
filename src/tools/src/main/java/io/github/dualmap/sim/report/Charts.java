package io.github.dualmap.sim.report;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import io.github.dualmap.sim.BenchmarkReport;
import io.github.dualmap.sim.RunResult;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.markers.SeriesMarkers;
import org.jspecify.annotations.Nullable;

/**
 * Renders the report's PNG charts with XChart: SLO attainment against rate per policy,
 * the TTFT CDF at the fixed rate, and per-instance load over time for DualMap and the
 * best peer.
 */
public final class Charts {

	/** Attainment against rate. */
	public static final String ATTAINMENT = "attainment.png";

	/** TTFT CDF at the fixed rate. */
	public static final String TTFT_CDF = "ttft_cdf.png";

	/** Per-instance load over time. */
	public static final String LOAD_OVER_TIME = "load_over_time.png";

	private static final int WIDTH = 900;

	private static final int HEIGHT = 560;

	// More points than pixels only slows the encoder down.
	private static final int MAX_POINTS = 800;

	private Charts() {
	}

	/** Writes the three charts into {@code dir}. */
	public static void writeAll(BenchmarkReport report, Path dir) throws IOException {
		// Charts render off-screen; no display is needed or wanted.
		System.setProperty("java.awt.headless", "true");
		attainment(report, dir.resolve(ATTAINMENT));
		ttftCdf(report, dir.resolve(TTFT_CDF));
		loadOverTime(report, dir.resolve(LOAD_OVER_TIME));
	}

	static void attainment(BenchmarkReport report, Path file) throws IOException {
		XYChart chart = new XYChartBuilder().width(WIDTH)
			.height(HEIGHT)
			.title("SLO attainment (TTFT <= " + report.sloTtftSeconds() + " s)")
			.xAxisTitle("arrival rate (req/s)")
			.yAxisTitle("requests within SLO (%)")
			.build();
		double maxRate = 0;
		for (BenchmarkReport.PolicyReport p : report.policies()) {
			List<RunResult> points = p.search().points();
			double[] x = points.stream().mapToDouble(RunResult::rate).toArray();
			double[] y = points.stream().mapToDouble(r -> 100 * r.attainment()).toArray();
			for (double r : x) {
				maxRate = Math.max(maxRate, r);
			}
			chart.addSeries(p.name(), x, y).setMarker(SeriesMarkers.CIRCLE);
		}
		double goal = 100 * report.targetAttainment();
		XYSeries target = chart.addSeries(String.format(java.util.Locale.ROOT, "%.3g %% target", goal),
				new double[] { 0, Math.max(maxRate, 1e-9) }, new double[] { goal, goal });
		target.setMarker(SeriesMarkers.NONE);
		chart.getStyler().setYAxisMin(0.0).setYAxisMax(100.0);
		BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
	}

	static void ttftCdf(BenchmarkReport report, Path file) throws IOException {
		XYChart chart = new XYChartBuilder().width(WIDTH)
			.height(HEIGHT)
			.title(String.format(java.util.Locale.ROOT, "TTFT CDF at %.2f req/s", report.fixedRate()))
			.xAxisTitle("TTFT (s)")
			.yAxisTitle("fraction of requests")
			.build();
		for (BenchmarkReport.PolicyReport p : report.policies()) {
			double[] sorted = p.atFixedRate().ttftSeconds();
			// Over every measured request: those a run stopped early never saw arrive
			// have
			// no TTFT, and the curve stays below them.
			double all = Math.max(sorted.length, p.atFixedRate().requests().measured());
			int n = Math.min(sorted.length, MAX_POINTS);
			double[] x = new double[n];
			double[] y = new double[n];
			for (int i = 0; i < n; i++) {
				int k = (int) ((long) (i + 1) * sorted.length / n) - 1;
				x[i] = sorted[k];
				y[i] = (k + 1.0) / all;
			}
			chart.addSeries(p.name(), x, y).setMarker(SeriesMarkers.NONE);
		}
		chart.getStyler().setYAxisMin(0.0).setYAxisMax(1.0);
		BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
	}

	static void loadOverTime(BenchmarkReport report, Path file) throws IOException {
		List<XYChart> charts = new ArrayList<>();
		for (BenchmarkReport.PolicyReport p : loadPolicies(report)) {
			RunResult.Timeline t = p.atFixedRate().timeline();
			XYChart chart = new XYChartBuilder().width(WIDTH)
				.height(HEIGHT / 2 + 80)
				.title(String.format(java.util.Locale.ROOT, "%s: running + waiting per instance at %.2f req/s",
						p.name(), report.fixedRate()))
				.xAxisTitle("time (s)")
				.yAxisTitle("requests")
				.build();
			if (t == null || t.seconds().length == 0) {
				chart.addSeries("no samples", new double[] { 0 }, new double[] { 0 });
			}
			else {
				int stride = Math.max(1, t.seconds().length / MAX_POINTS);
				for (int k = 0; k < t.load().length; k++) {
					int n = (t.seconds().length + stride - 1) / stride;
					double[] x = new double[n];
					double[] y = new double[n];
					for (int i = 0; i < n; i++) {
						x[i] = t.seconds()[i * stride];
						y[i] = t.load()[k][i * stride];
					}
					chart.addSeries("instance " + k, x, y).setMarker(SeriesMarkers.NONE);
				}
			}
			chart.getStyler().setLegendVisible(false);
			charts.add(chart);
		}
		BitmapEncoder.saveBitmap(charts, charts.size(), 1, file.toString(), BitmapEncoder.BitmapFormat.PNG);
	}

	/** DualMap (or the first policy) and the peer with the highest capacity, if any. */
	static List<BenchmarkReport.PolicyReport> loadPolicies(BenchmarkReport report) {
		BenchmarkReport.PolicyReport dualmap = null;
		BenchmarkReport.PolicyReport peer = null;
		for (BenchmarkReport.PolicyReport p : report.policies()) {
			if (p.name().startsWith("dualmap")) {
				// The plain variant wins over ablations; otherwise the first listed.
				if (dualmap == null || p.name().equals("dualmap")) {
					dualmap = p;
				}
			}
			else if (better(p, peer)) {
				peer = p;
			}
		}
		List<BenchmarkReport.PolicyReport> out = new ArrayList<>();
		if (dualmap != null) {
			out.add(dualmap);
		}
		if (peer != null) {
			out.add(peer);
		}
		if (out.isEmpty()) {
			out.add(report.policies().get(0));
		}
		return out;
	}

	private static boolean better(BenchmarkReport.PolicyReport p, BenchmarkReport.@Nullable PolicyReport than) {
		return than == null || p.search().capacity() > than.search().capacity();
	}

}
