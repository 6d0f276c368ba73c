/**
 * The DualMap scheduler as plain Java: prefix chains, dual hash rings, shadow KV indexes,
 * load views, the TTFT model and every {@link io.github.dualmap.core.RoutingPolicy}. No
 * Spring, no Reactor; time comes through {@link io.github.dualmap.core.NanoClock} so the
 * simulator can drive the same objects in virtual time.
 */
@NullMarked
package io.github.dualmap.core;

import org.jspecify.annotations.NullMarked;
