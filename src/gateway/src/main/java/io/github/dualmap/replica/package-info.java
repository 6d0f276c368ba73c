/**
 * Replica sync: gateway replicas publish the prompt blocks they released to each
 * instance, and apply what their peers published to their own shadow indexes, so a
 * prompt's cached candidate is known to every replica, not only to the one that routed
 * it.
 */
@NullMarked
package io.github.dualmap.replica;

import org.jspecify.annotations.NullMarked;
