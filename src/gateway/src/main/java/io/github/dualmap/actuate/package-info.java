/**
 * Observability of the DualMap gateway: the {@code /actuator/dualmap} endpoint (rings,
 * per-instance state, configuration, hot prefix hashes, warnings, draining) and the
 * {@code dualmap.*} Micrometer meters. Nothing here exposes prompt text, and no meter tag
 * carries a prompt-derived value.
 */
@NullMarked
package io.github.dualmap.actuate;

import org.jspecify.annotations.NullMarked;
