#include "frame_meta.h"

int frame_meta_register(void)
{
	static const struct rte_mbuf_dynfield desc = {
		.name = "linkemu_frame_meta",
		.size = sizeof(struct frame_meta),
		.align = __alignof__(struct frame_meta),
	};
	return rte_mbuf_dynfield_register(&desc);
}
