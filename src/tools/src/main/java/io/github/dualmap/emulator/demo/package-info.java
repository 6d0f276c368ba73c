/**
 * The {@code demo} Spring profile: the gateway in front of a pool of emulated instances
 * started in the same process.
 */
@NullMarked
package io.github.dualmap.emulator.demo;

import org.jspecify.annotations.NullMarked;
