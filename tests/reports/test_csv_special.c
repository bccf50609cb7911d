/* A result file that is no regular file, read by compare, plot, merge and --resume: a FIFO named
 * raw.csv hung the reader in open() for good, a link to /dev/zero read until memory ran out, and a
 * socket failed to open as a runtime error. Each is refused at once as bad input (LB_ERR_FORMAT,
 * naming the file), before it is opened; a regular file behind a link still reads. An alarm turns a hang into a failure. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "attn/base/status.h"
#include "reports/csv_io.h"
#include "tests/lib/check.h"
#include "tests/reports/fixture.h"

int main(void)
{
    lb_test_init("test_csv_special");
    char *scratch = lb_test_tempdir("csv_special");
    char fifo[4200], zero[4200], plain[4200], link_to_plain[4200], sock[4200];
    snprintf(sock, sizeof sock, "%s/sock.csv", scratch);
    snprintf(fifo, sizeof fifo, "%s/fifo.csv", scratch);
    snprintf(zero, sizeof zero, "%s/zero.csv", scratch);
    snprintf(plain, sizeof plain, "%s/plain.csv", scratch);
    snprintf(link_to_plain, sizeof link_to_plain, "%s/link.csv", scratch);
    lb_check(mkfifo(fifo, 0666) == 0 && symlink("/dev/zero", zero) == 0 && symlink(plain, link_to_plain) == 0,
             "planted a FIFO and two links");
    fx_write(plain, "w", "key,value\na,b\n");
    /* bound by a relative name: sun_path holds 108 bytes, the scratch path may be longer */
    struct sockaddr_un addr = {.sun_family = AF_UNIX, .sun_path = "sock.csv"};
    const int sfd = socket(AF_UNIX, SOCK_STREAM, 0);
    lb_check(sfd >= 0 && chdir(scratch) == 0 && bind(sfd, (struct sockaddr *)&addr, sizeof addr) == 0,
             "planted a socket");

    alarm(20); /* the reads below end at once, or this fails the test */
    const char *const refused[] = {fifo, zero, scratch, sock};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        LbCsvTable t;
        lb_error_clear();
        const int rc = lb_csv_read_file(refused[i], 0, &t);
        lb_check(rc == LB_ERR_FORMAT && strstr(lb_error_message(), refused[i]) &&
                     strstr(lb_error_message(), "not a regular file"),
                 "%s: rc %d, \"%s\": should be LB_ERR_FORMAT, not a regular file", refused[i], rc, lb_error_message());
        if (rc == LB_OK)
            lb_csv_table_free(&t);
    }
    LbCsvTable t;
    const int rc = lb_csv_read_file(link_to_plain, 0, &t);
    lb_check(rc == LB_OK && t.rows == 2, "a link to a regular file reads: rc %d, %zu rows", rc, rc == LB_OK ? t.rows : 0);
    if (rc == LB_OK)
        lb_csv_table_free(&t);
    alarm(0);
    close(sfd);
    lb_test_cleanup(scratch);
    return lb_test_finish("test_csv_special");
}
