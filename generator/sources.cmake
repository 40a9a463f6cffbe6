# The sources of dlcgen_core, shared by generator/CMakeLists.txt and the
# libFuzzer build (tests/fuzz/libfuzzer), which compiles them with clang.
set(DLCGEN_SOURCES
  algo.c kinds.c arena.c arch.c diag.c dtype.c jsonutil.c sx.c dsl.c
  frontend.c layout.c tiny.c indexbook.c polyview.c region.c polycore.c plan.c gpuir.c emit.c emit_host.c emit_host_plan.c emit_catalog.c emit_verify.c workspace.c manifest.c outfiles.c strbuf.c
  playback.c
  skel/rows.c skel/sm80_contraction.c skel/splitk_reduce.c skel/sm90a_contraction.c
  skel/sm80_attention.c skel/sm90a_attention.c skel/skel.c
)
