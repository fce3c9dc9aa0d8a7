/*
 * go_src.S - bench/go/fibers.go inside the xsc binary, so that `xsc bench
 * fibers` can build its Go anchor wherever xsc is installed (fibers.c).
 * XSC_GO_SRC is the file's path (CMakeLists.txt).
 */
	.section .rodata
	.globl	bench_go_src
	.type	bench_go_src, @object
bench_go_src:
	.incbin	XSC_GO_SRC
	.byte	0
	.size	bench_go_src, . - bench_go_src

	.section .note.GNU-stack, "", @progbits
