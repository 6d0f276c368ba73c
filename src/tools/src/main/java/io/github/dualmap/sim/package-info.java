/**
 * Discrete-event simulator: replays a trace into the same routing policies the gateway
 * runs and into modelled engine instances, in virtual time, and searches the highest
 * request rate each policy sustains within the TTFT objective.
 */
@NullMarked
package io.github.dualmap.sim;

import org.jspecify.annotations.NullMarked;
