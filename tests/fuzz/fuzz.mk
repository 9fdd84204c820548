# Build the libFuzzer harnesses (clang, ASan + UBSan) into $(O); driven by tests/fuzz/run.sh:
#   make -f tests/fuzz/fuzz.mk O=_build/fuzz CONFIG_H_DIR=_build/host CORE_SOURCES="..."
# CORE_SOURCES comes from pam_capdelegate/core/core.am (run.sh reads it there), so the list of the core's
# files is written in one place only. The CLI files each harness needs are named below: they
# are core-free by design (cli_xattr.h, cli_out.h).
O ?= _build/fuzz
CONFIG_H_DIR ?= _build/host
CORE_SOURCES ?= $(error CORE_SOURCES not set: run tests/fuzz/run.sh)
CC = clang

SAN = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
# The code under test: sanitizers plus libFuzzer's coverage hooks, but no libFuzzer main.
CFLAGS_LIB = -std=gnu11 -g -O1 -Wall -Wextra $(SAN) -fsanitize=fuzzer-no-link \
	-I$(CONFIG_H_DIR) -Ipam_capdelegate/core -Ipam_capdelegate/cli
# The harnesses are ours: warnings are errors.
CFLAGS_FUZZ = $(CFLAGS_LIB) -Werror
LDFLAGS_FUZZ = $(SAN) -fsanitize=fuzzer

HARNESSES = policy fcaps escape marks userdb usage
all: $(addprefix $(O)/fuzz_,$(HARNESSES))

core_objs = $(patsubst pam_capdelegate/core/%.c,$(O)/obj/%.o,$(CORE_SOURCES))

$(O)/obj/%.o: pam_capdelegate/core/%.c pam_capdelegate/core/*.h $(CONFIG_H_DIR)/config.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_LIB) -c -o $@ $<

$(O)/obj/%.o: pam_capdelegate/cli/%.c pam_capdelegate/cli/*.h $(CONFIG_H_DIR)/config.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_LIB) -c -o $@ $<

$(O)/obj/fuzz_%.o: tests/fuzz/fuzz_%.c pam_capdelegate/core/*.h pam_capdelegate/cli/*.h tests/fuzz/fuzz.mk
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_FUZZ) -c -o $@ $<

$(O)/fuzz_policy: $(O)/obj/fuzz_policy.o $(core_objs)
	$(CC) $(LDFLAGS_FUZZ) -o $@ $^ -lcap -lpam -lpthread

$(O)/fuzz_marks: $(O)/obj/fuzz_marks.o $(core_objs)
	$(CC) $(LDFLAGS_FUZZ) -o $@ $^ -lcap -lpam -lpthread

$(O)/fuzz_fcaps: $(O)/obj/fuzz_fcaps.o $(O)/obj/cli_xattr.o
	$(CC) $(LDFLAGS_FUZZ) -o $@ $^

$(O)/fuzz_userdb: $(O)/obj/fuzz_userdb.o $(O)/obj/cli_userdb.o $(O)/obj/cli_stage.o $(O)/obj/cli_check.o \
		$(O)/obj/cli_nss.o $(O)/obj/cli_common.o $(O)/obj/cli_out.o $(core_objs)
	$(CC) $(LDFLAGS_FUZZ) -o $@ $^ -lcap -lpam -lpthread -ljson-c

# usage's reader with the system's libauparse (not instrumented: the harness judges what it gives)
$(O)/fuzz_usage: $(O)/obj/fuzz_usage.o $(O)/obj/cli_usage_read.o $(O)/obj/cli_usage_rec.o \
		$(O)/obj/cli_usage_join.o \
		$(O)/obj/cli_hash.o $(O)/obj/cli_out.o $(core_objs)
	$(CC) $(LDFLAGS_FUZZ) -o $@ $^ -lauparse -lcap -lpam -lpthread

$(O)/fuzz_escape: $(O)/obj/fuzz_escape.o $(O)/obj/cli_out.o $(O)/obj/cd_log.o
	$(CC) $(LDFLAGS_FUZZ) -o $@ $^ -lpam

.PHONY: all
