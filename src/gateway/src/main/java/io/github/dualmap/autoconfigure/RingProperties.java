package io.github.dualmap.autoconfigure;

import io.github.dualmap.core.DualHashRing;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;

/** {@code dualmap.ring.*}: the two consistent-hash rings. */
public class RingProperties {

	/** Virtual nodes per unit of instance weight on each ring. */
	@Min(value = 1, message = "dualmap.ring.virtual-nodes must be >= 1")
	@Max(value = DualHashRing.MAX_VIRTUAL_NODES, message = "dualmap.ring.virtual-nodes must be <= 10000")
	private int virtualNodes = DualHashRing.DEFAULT_VIRTUAL_NODES;

	/** Instance metadata key holding the instance's relative weight. */
	@NotBlank(message = "dualmap.ring.weight-metadata-key must not be blank")
	private String weightMetadataKey = "dualmap.weight";

	public int getVirtualNodes() {
		return this.virtualNodes;
	}

	public void setVirtualNodes(int virtualNodes) {
		this.virtualNodes = virtualNodes;
	}

	public String getWeightMetadataKey() {
		return this.weightMetadataKey;
	}

	public void setWeightMetadataKey(String weightMetadataKey) {
		this.weightMetadataKey = weightMetadataKey;
	}

}
