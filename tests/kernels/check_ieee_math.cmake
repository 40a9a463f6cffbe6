# An op in "math": "ieee" (docs/manifest.md) spells no approximate form in
# any of its kernels: the default kernel, every shape bucket's and the
# split-K reduce kernels.  dlcgen compiles MANIFEST into OUT; each .cu must
# hold exp2f and none of dlc::ex2, dlc::lg2, dlc::rcp, dlc::sqrt_approx,
# dlc::div_approx, dlc::tanh_approx, dlc::gate_tanh*.
file(REMOVE_RECURSE ${OUT})
execute_process(COMMAND ${DLCGEN} --manifest ${MANIFEST} --out ${OUT} --quiet RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "dlcgen failed on ${MANIFEST}")
endif()
file(GLOB cus ${OUT}/kernels/*.cu)
if(NOT cus)
  message(FATAL_ERROR "no kernels in ${OUT}")
endif()
foreach(cu ${cus})
  file(STRINGS ${cu} bad REGEX "dlc::(ex2|lg2|rcp|sqrt_approx|div_approx|tanh_approx|gate_tanh[a-z0-9_]*)[(<]")
  if(bad)
    list(GET bad 0 first)
    message(FATAL_ERROR "${cu}: an approximate form in \"ieee\" math: ${first}")
  endif()
  file(STRINGS ${cu} good REGEX "exp2f\\(")
  if(NOT good)
    message(FATAL_ERROR "${cu}: no exp2f")
  endif()
endforeach()
