package client

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// errorOf reads a failed answer: Cosmos's {"code", "message"} body when there is one, the
// substatus and the retry-after from the headers.
func errorOf(resp *http.Response, body []byte) *Error {
	e := &Error{Status: resp.StatusCode}
	e.SubStatus, _ = strconv.Atoi(resp.Header.Get("x-ms-substatus"))
	if ms, err := strconv.ParseFloat(resp.Header.Get("x-ms-retry-after-ms"), 64); err == nil && ms > 0 {
		e.RetryAfter = time.Duration(ms * float64(time.Millisecond))
	}
	var shaped struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &shaped) == nil && (shaped.Code != "" || shaped.Message != "") {
		e.Code, e.Message = shaped.Code, shaped.Message
	} else {
		e.Message = strings.TrimSpace(string(body))
	}
	if e.Code == "" {
		e.Code = http.StatusText(resp.StatusCode)
	}
	return e
}
