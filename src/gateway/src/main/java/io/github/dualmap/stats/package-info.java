/**
 * Engine state scraped from instances' Prometheus {@code /metrics} endpoints: a parser of
 * the text exposition format for the vLLM (V0, V1) and SGLang metric names, and a scraper
 * on the JDK HTTP client that keeps one independent, jittered loop per instance.
 */
@NullMarked
package io.github.dualmap.stats;

import org.jspecify.annotations.NullMarked;
