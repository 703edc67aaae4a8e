from tests.factories import Factory


def test_register_login_me(factory: Factory) -> None:
    browser = factory.signed_in()
    reply = browser.get("/api/auth/me")
    assert reply.status_code == 200
    assert reply.json["id"] == browser.user_id
