/* lane_end.h: closes an instantiation that lane.h opened (see there). */
#undef MBD_LANES
#undef lane
#undef lane_xform
#undef lane_inertia
#undef lane_work
#undef LANE_FN
#undef LANE_API
