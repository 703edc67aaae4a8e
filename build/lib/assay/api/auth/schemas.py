from __future__ import annotations

from marshmallow import Schema, fields, validate, validates_schema
from marshmallow.exceptions import ValidationError

from assay.api.fields import Email, StrictBoolean
from assay.core.auth.passwords import MIN_LENGTH, PATTERN, POLICY


class UserSchema(Schema):
    id = fields.Integer(required=True)
    email = fields.String(required=True)
    name = fields.String(required=True, allow_none=True)
    created_at = fields.DateTime(required=True)


class RegisterSchema(Schema):
    email = Email(required=True)
    name = fields.String(load_default=None, allow_none=True, validate=validate.Length(max=255))
    # The document states the policy; the server checks it in register(), which names every
    # rule the password breaks (422 "Password is too weak").
    password = fields.String(required=True, validate=validate.Length(min=1, max=1024),
                             metadata={"minLength": MIN_LENGTH, "pattern": PATTERN,
                                       "description": POLICY})
    confirm_password = fields.String(required=True, validate=validate.Length(max=1024))

    @validates_schema
    def passwords_match(self, data: dict[str, str], **_: object) -> None:
        if data.get("password") != data.get("confirm_password"):
            raise ValidationError("Passwords don't match", "confirm_password")


class LoginSchema(Schema):
    email = Email(required=True)
    password = fields.String(required=True, validate=validate.Length(min=1, max=1024))
    remember_me = StrictBoolean(load_default=False)


class LoginResultSchema(Schema):
    user = fields.Nested(UserSchema, required=True)
    csrf_token = fields.String(required=True)


class TokenCreateSchema(Schema):
    name = fields.String(required=True, validate=validate.Length(min=1, max=100))


class TokenSchema(Schema):
    id = fields.Integer(required=True)
    name = fields.String(required=True)
    prefix = fields.String(required=True)
    created_at = fields.DateTime(required=True)
    last_used_at = fields.DateTime(required=True, allow_none=True)


class TokenCreatedSchema(TokenSchema):
    token = fields.String(required=True, metadata={"description": "Shown once; store it now."})


class TokenListSchema(Schema):
    items = fields.List(fields.Nested(TokenSchema), required=True)
