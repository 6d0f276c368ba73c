/**
 * Engine state scraped from each instance's Prometheus endpoint: parsing per engine
 * flavour and the periodic, jittered scraper.
 */
@NullMarked
package io.github.dualmap.stats;

import org.jspecify.annotations.NullMarked;
