package io.github.dualmap.core;

/**
 * A policy whose router holds arrivals in its own first-come-first-served queue while the
 * pool is saturated by the policy's own measure (Dynamo's router queue, llm-d's flow
 * control with its saturation detector), and releases them, oldest first, once it is not.
 * The host (the simulator) keeps the queue: a held request gets no instance until it
 * leaves it, and an arrival joins the queue behind any request already held.
 */
public interface AdmissionHold {

	/** Whether a request arriving now must wait. */
	boolean mustHold(InstancePool pool);

}
