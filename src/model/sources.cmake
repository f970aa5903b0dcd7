# Sources of src/model (included by src/CMakeLists.txt).
list(APPEND TOPOCOLL_SOURCES model/logp.c model/cost.c model/tuning.c model/cost_shm_coll.c
    model/settings.c model/cost_gather.c model/cost_reduce_scatter.c
    model/cost_alltoall.c)
