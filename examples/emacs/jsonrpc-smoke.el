;;; jsonrpc-smoke.el --- drive session-sidecar with Emacs's jsonrpc.el (as Eglot does)  -*- lexical-binding: t -*-
;; Usage: emacs --batch -l jsonrpc-smoke.el SIDECAR-JS STORE
;; Prints "exit-code N" and exits with the sidecar's exit code.
(require 'jsonrpc)
(let* ((cli (nth 0 command-line-args-left))
       (store (nth 1 command-line-args-left))
       (proc (make-process :name "sidecar" :command (list "node" cli "--store" store)
                           :connection-type 'pipe :coding 'utf-8-emacs-unix :noquery t
                           :stderr (get-buffer-create "*sidecar-stderr*")))
       (conn (make-instance 'jsonrpc-process-connection :name "sidecar" :process proc))
       (init (jsonrpc-request conn :initialize '(:protocolVersion 1 :clientInfo (:name "jsonrpc.el"))))
       (_ (jsonrpc-notify conn :initialized nil))
       (sid (plist-get (jsonrpc-request conn :session/create '(:title "emacs")) :sessionId))
       (appended (jsonrpc-request conn :session/append
                                  `(:sessionId ,sid :records [(:kind "message" :message (:role "user" :content "hi"))])))
       (read (jsonrpc-request conn :session/read `(:sessionId ,sid))))
  (princ (format "protocol %s lastSeq %s records %d\n" (plist-get init :protocolVersion)
                 (plist-get appended :lastSeq) (length (plist-get read :records))))
  (jsonrpc-request conn :shutdown nil)
  (jsonrpc-notify conn :exit nil)
  (let ((deadline (+ (float-time) 10)))
    (while (and (process-live-p proc) (< (float-time) deadline)) (accept-process-output proc 0.1)))
  (princ (format "exit-code %s\n" (process-exit-status proc)))
  (kill-emacs (process-exit-status proc)))
