# Roofline of a dlc-bench CSV (Debian: gnuplot-nox).
#
#   gnuplot -e "csv='model.csv'; png='roofline.png'" bench/roofline.gp
#
# x: arithmetic intensity, flops / bytes (the CSV's bytes: the model's DRAM
# bytes, or the ideal ones of a GPU run's CSV when it has none); y: TFLOP/s,
# flops / time, with time the actual_us column when present, else
# estimate_us.  One point per row, coloured by arch, with the sm80 (A100:
# 312 TFLOP/s, 2039 GB/s) and sm90a (H100 SXM: 989 TFLOP/s, 3350 GB/s) roofs
# of generator/plan.c's arch table.
if (!exists("csv")) csv = 'dlc-bench.csv'
if (!exists("png")) png = 'roofline.png'
set terminal pngcairo size 1000,700 noenhanced
set output png
set datafile separator ','
set key top left
set logscale xy
set xrange [0.1:10000]
set yrange [0.1:2000]
set xlabel 'arithmetic intensity (FLOP / DRAM byte)'
set ylabel 'TFLOP/s'
set title sprintf('dlc-bench roofline (%s)', csv)
roof(x, peak, bw) = (x * bw / 1000.0 < peak) ? x * bw / 1000.0 : peak
time_us(a, e) = (strlen(a) > 0) ? real(a) : real(e)
# columns: 1 op, 2 shape, 3 dtype, 4 arch, 5 plan, 6 ctas, 7 flops, 8 bytes, 9 occupancy, 10 estimate_us, 11 actual_us
plot roof(x, 312, 2039) with lines lw 2 lc rgb '#1f77b4' title 'sm80 roof (A100)', \
     roof(x, 989, 3350) with lines lw 2 lc rgb '#d62728' title 'sm90a roof (H100)', \
     csv skip 1 using (strcol(4) eq 'sm80' && column(8) > 0 ? column(7) / column(8) : NaN):(column(7) / time_us(strcol(11), strcol(10)) / 1e6) \
         with points pt 7 ps 1.2 lc rgb '#1f77b4' title 'sm80', \
     csv skip 1 using (strcol(4) eq 'sm90a' && column(8) > 0 ? column(7) / column(8) : NaN):(column(7) / time_us(strcol(11), strcol(10)) / 1e6) \
         with points pt 5 ps 1.2 lc rgb '#d62728' title 'sm90a'
