/**
 * Renderings of a simulator run: the markdown table, {@code results.json} and the PNG
 * charts.
 */
@NullMarked
package io.github.dualmap.sim.report;

import org.jspecify.annotations.NullMarked;
