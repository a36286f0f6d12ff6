package server

import (
	"encoding/json"
	"net/http"
)

// apiError is OpenAI's error body: {"error": {...}}.
type apiError struct {
	Error apiErrorBody `json:"error"`
}

type apiErrorBody struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

func errorBody(typ, param, code, msg string) apiError {
	e := apiError{Error: apiErrorBody{Message: msg, Type: typ}}
	if param != "" {
		e.Error.Param = &param
	}
	if code != "" {
		e.Error.Code = &code
	}
	return e
}

func writeError(w http.ResponseWriter, status int, typ, param, code, msg string) {
	writeJSON(w, status, errorBody(typ, param, code, msg))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":{"message":"encoding the answer failed","type":"server_error","param":null,"code":null}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", itoa(len(b)+1))
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}
